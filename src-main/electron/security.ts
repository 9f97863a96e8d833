import type { Session, WebFrameMain } from 'electron';

/**
 * Electron security checklist, applied to the app's session:
 * - permissions: only the camera ('media' with video alone) is ever granted; everything else,
 *   microphone included, is refused;
 * - IPC: requests are answered only for the app's own top frame (file:// build or the dev server).
 */
export function restrictPermissions(session: Session): void {
  session.setPermissionRequestHandler((_webContents, permission, callback, details) => {
    const mediaTypes = 'mediaTypes' in details ? (details.mediaTypes ?? []) : [];
    callback(permission === 'media' && mediaTypes.length > 0 && mediaTypes.every((type) => type === 'video'));
  });
  session.setPermissionCheckHandler((_webContents, permission, _origin, details) => {
    return permission === 'media' && details.mediaType === 'video';
  });
}

export function isTrustedFrame(frame: WebFrameMain | null, devServerUrl: string | undefined): boolean {
  if (frame === null || frame.parent !== null) return false;
  const url = new URL(frame.url);
  if (url.protocol === 'file:') return true;
  return devServerUrl !== undefined && url.origin === new URL(devServerUrl).origin;
}
