import { expect } from 'vitest';
import type { FakeWebContents } from './fake-electron';

/** The page in `contents` cannot navigate any frame, redirect away, open windows or attach webviews. */
export function expectNavigationGuarded(contents: FakeWebContents): void {
  for (const url of ['https://example.com/', 'file:///etc/passwd', 'knob://app/other.html'])
    for (const event of ['will-navigate', 'will-frame-navigate'])
      expect(contents.fireNavigation(event, url), `${event} ${url}`).toBe(true);
  expect(contents.fireNavigation('will-redirect', 'https://example.com/')).toBe(true);
  expect(contents.fireNavigation('will-redirect', 'knob://app/index.html')).toBe(false);
  expect(contents.fireNavigation('will-attach-webview', 'https://example.com/')).toBe(true);
  expect(contents.windowOpenHandler?.({ url: 'https://example.com/' })).toEqual({ action: 'deny' });
  expect(contents.windowOpenHandler?.({ url: 'knob://app/index.html' })).toEqual({ action: 'deny' });
}
