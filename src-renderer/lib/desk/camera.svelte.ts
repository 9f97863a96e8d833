import type { KnobApi } from '../../../src-shared/api/client';
import type { ModelDescription } from '../../../src-shared/api/model-options';
import { listCameras, startCamera, type CameraCapture, type CameraDevice } from '../camera-capture';
import type { ErrorSlots } from './error-slots.svelte';

/**
 * The camera as the desk drives it: the devices to choose from, the chosen one, and the capture
 * that pushes frames while the session is in its camera state (camera-capture.ts does the capture).
 */
export class Camera {
  cameras = $state<CameraDevice[]>([]);
  deviceId = $state<string | null>(null);
  private capture: CameraCapture | null = null;

  constructor(private readonly host: { api: KnobApi; slots: ErrorSlots }) {}

  /** Captures from the chosen device at the model's input size; the source's provenance names the device. */
  async start(model: ModelDescription, frameRateHz: number): Promise<void> {
    const { api, slots } = this.host;
    const { width, height, channels } = model.input;
    this.stop();
    this.capture = await slots.attempt('source', () =>
      startCamera({
        deviceId: this.deviceId,
        width,
        height,
        channels,
        frameRateHz,
        send: (packet) => api.sendFrame(packet),
      }),
    );
    const capture = this.capture;
    if (capture !== null) await slots.attempt('source', () => api.call('source.describeCamera', capture.device));
    // Device labels are only readable once the camera permission was granted.
    void this.refresh();
  }

  stop(): void {
    this.capture?.stop();
    this.capture = null;
  }

  async refresh(): Promise<void> {
    const cameras = await this.host.slots.attempt('source', () => listCameras());
    if (cameras) this.cameras = cameras;
  }
}
