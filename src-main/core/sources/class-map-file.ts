import type { ClassMap } from '../../../src-shared/labels/class-names';
import { parseClassMapText } from '../../../src-shared/labels/class-map-text';
import { readUserText } from '../files/user-files';

/** A class map file (`source name -> model label`, text or JSON: class-map-text.ts), read as a table. */
export async function readClassMapFile(path: string): Promise<ClassMap> {
  return parseClassMapText(await readUserText(path, 'table'), path);
}
