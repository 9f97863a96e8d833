/**
 * A Gamepad API put into Chromium at the browser API boundary, for the end-to-end test of the
 * hardware knobs (no gamepad exists on the build machines): `navigator.getGamepads()` answers the
 * pads of `window.testPad`, whose `connect()` adds 'Test Pad' (two axes, four buttons) and fires
 * `gamepadconnected`, and whose `axis(i, v)` and `button(i, pressed)` move it as a hand would. The
 * desk polls the pad once an animation frame, as it polls a real one. Text, not a function (see
 * injected-web-midi.ts).
 */
export const INJECTED_GAMEPAD = `(() => {
  const pads = [];
  const pad = {
    id: 'Test Pad (Vendor: 0001 Product: 0002)',
    index: 0,
    connected: true,
    mapping: 'standard',
    timestamp: 0,
    axes: [0, 0],
    buttons: [0, 1, 2, 3].map(() => ({ pressed: false, touched: false, value: 0 })),
  };
  Object.defineProperty(Navigator.prototype, 'getGamepads', { configurable: true, value: () => [...pads] });
  window.testPad = {
    connect() {
      if (pads.length === 0) pads.push(pad);
      const event = new Event('gamepadconnected');
      Object.defineProperty(event, 'gamepad', { value: pad });
      window.dispatchEvent(event);
    },
    axis(index, value) {
      pad.axes[index] = value;
      pad.timestamp = performance.now();
    },
    button(index, pressed) {
      pad.buttons[index] = { pressed, touched: pressed, value: pressed ? 1 : 0 };
      pad.timestamp = performance.now();
    },
  };
})();`;

/** A page script that runs `call` on window.testPad (e.g. "axis(0, 0.6)"). */
export const padScript = (call: string): string => `window.testPad.${call}`;
