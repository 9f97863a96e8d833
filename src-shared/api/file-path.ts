import { z } from 'zod';

/** A path the API takes: not empty, and bounded (what a path on any platform the app runs on can be). */
export const FilePathSchema = z.string().min(1).max(4096);
