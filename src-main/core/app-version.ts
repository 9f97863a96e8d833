import packageJson from '../../package.json';

/** The app's name, and its version from package.json: the one place the version is written. */
export const APP_NAME = 'Knob Studio';
export const APP_VERSION: string = packageJson.version;
