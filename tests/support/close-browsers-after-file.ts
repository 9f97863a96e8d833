import { afterAll } from 'vitest';
import { closeSharedBrowsers } from './browser-mode';

/**
 * Setup file of the integration project, whose files share one module graph a worker: browser-mode's
 * own afterAll is registered by the first file that imports it only, so each file closes the
 * browsers it launched here (vitest runs setup files before every test file).
 */
afterAll(closeSharedBrowsers);
