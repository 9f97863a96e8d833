import type { DownscaleRequest } from './frame-downscale.worker';

/**
 * The camera: getUserMedia (video only, the one permission the app ever asks for), frames grabbed
 * at up to `frameRateHz`, downscaled in a Worker and sent on the binary frame path. One frame is in
 * the Worker at a time; a frame due while the previous one is still there is skipped (latest wins),
 * and the capture time comes from the page clock at the moment of grabbing.
 */
export interface CameraDevice {
  deviceId: string;
  label: string;
}

export async function listCameras(): Promise<CameraDevice[]> {
  const devices = await navigator.mediaDevices.enumerateDevices();
  return devices
    .filter((d) => d.kind === 'videoinput')
    .map((d, i) => ({ deviceId: d.deviceId, label: d.label || `camera ${i + 1}` }));
}

export interface CameraCapture {
  stop(): void;
  readonly framesSent: number;
  /** The device as the browser reports it once capturing: its label and the capture resolution. */
  readonly device: { deviceLabel: string; width: number; height: number };
}

export async function startCamera(options: {
  deviceId: string | null;
  width: number;
  height: number;
  channels: 1 | 3;
  frameRateHz: number;
  send: (packet: Uint8Array) => void;
}): Promise<CameraCapture> {
  const stream = await navigator.mediaDevices.getUserMedia({
    video: options.deviceId ? { deviceId: { exact: options.deviceId } } : true,
    audio: false,
  });
  const video = document.createElement('video');
  video.muted = true;
  video.playsInline = true;
  video.srcObject = stream;
  await video.play();
  const track = stream.getVideoTracks()[0];
  const settings = track?.getSettings() ?? {};
  const device = {
    deviceLabel: (track?.label ?? '').slice(0, 4096),
    width: Math.max(1, Math.round(settings.width ?? video.videoWidth)),
    height: Math.max(1, Math.round(settings.height ?? video.videoHeight)),
  };
  const worker = new Worker(new URL('./frame-downscale.worker.ts', import.meta.url), { type: 'module' });
  let busy = false;
  let sent = 0;
  let stopped = false;
  worker.onmessage = (event: MessageEvent<Uint8Array>) => {
    busy = false;
    if (stopped) return;
    options.send(event.data);
    sent++;
  };
  const grab = async (): Promise<void> => {
    if (stopped || busy || video.readyState < 2) return;
    busy = true;
    const bitmap = await createImageBitmap(video);
    const request: DownscaleRequest = {
      bitmap,
      width: options.width,
      height: options.height,
      channels: options.channels,
      timestampSeconds: performance.now() / 1000,
    };
    worker.postMessage(request, [bitmap]);
  };
  const timer = setInterval(() => void grab(), 1000 / options.frameRateHz);
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
      worker.terminate();
      for (const track of stream.getTracks()) track.stop();
      video.srcObject = null;
    },
    get framesSent() {
      return sent;
    },
    device,
  };
}
