/**
 * The shell's trust rules as pure functions (src-main/electron/security.ts, build-paths.ts): the
 * dev server's URL is honoured only by an unpackaged app and only on this machine; the app's
 * origin is compared as scheme://host (a custom scheme has no URL.origin in Node); the preload and
 * renderer are found beside the main bundle, also inside a packaged app.asar.
 */
import { describe, expect, it } from 'vitest';
import { shellPaths } from '../../src-main/electron/build-paths';
import { isAppUrl, isTrustedFrame, trustedOrigin } from '../../src-main/electron/security';

describe('trustedOrigin', () => {
  it('a packaged app ignores ELECTRON_RENDERER_URL', () => {
    expect(trustedOrigin(true, 'http://localhost:5173/')).toEqual({
      origin: 'knob://app',
      url: 'knob://app/index.html',
    });
  });

  it('an unpackaged app takes a local dev server, and nothing else', () => {
    expect(trustedOrigin(false, 'http://localhost:5173/')).toEqual({
      origin: 'http://localhost:5173',
      url: 'http://localhost:5173/',
    });
    for (const url of ['https://example.com/', 'file:///tmp/index.html', 'http://192.168.1.9:5173/', 'not a url'])
      expect(trustedOrigin(false, url).origin, url).toBe('knob://app');
    expect(trustedOrigin(false, undefined).origin).toBe('knob://app');
  });
});

describe('isAppUrl and isTrustedFrame', () => {
  const trust = { origin: 'knob://app' };
  it('matches the app scheme and host only', () => {
    expect(isAppUrl('knob://app/index.html', trust)).toBe(true);
    expect(isAppUrl('knob://app', trust)).toBe(true);
    for (const url of [
      'knob://app.evil/index.html',
      'knob://other/',
      'file:///index.html',
      'https://app/',
      '',
      'knob:app',
    ])
      expect(isAppUrl(url, trust), url).toBe(false);
  });

  it('trusts the top frame at the app origin only', () => {
    const top = { url: 'knob://app/index.html', parent: null };
    expect(isTrustedFrame(top as never, trust)).toBe(true);
    expect(isTrustedFrame({ ...top, parent: top } as never, trust)).toBe(false);
    expect(isTrustedFrame({ url: 'file:///home/user/evil.html', parent: null } as never, trust)).toBe(false);
    expect(isTrustedFrame(null, trust)).toBe(false);
  });
});

describe('shellPaths', () => {
  it('finds the preload and renderer beside the main bundle, in a packaged app.asar too', () => {
    expect(shellPaths('file:///opt/Knob%20Studio/resources/app.asar/out/main/index.js')).toEqual({
      preload: '/opt/Knob Studio/resources/app.asar/out/preload/index.cjs',
      rendererDir: '/opt/Knob Studio/resources/app.asar/out/renderer/',
    });
  });

  it("from the sources, the repository's build in out/", () => {
    expect(shellPaths('file:///work/repo/src-main/electron/main.ts')).toEqual({
      preload: '/work/repo/out/preload/index.cjs',
      rendererDir: '/work/repo/out/renderer/',
    });
  });
});
