/**
 * A Web MIDI implementation put into Chromium at the browser API boundary, for the tests and the
 * benchmark of the hardware knobs (no MIDI device exists on the build machines):
 * `navigator.requestMIDIAccess` answers a MIDIAccess with one MIDIInput named 'Test Knob Box',
 * and `window.testMidi.send(bytes)` delivers a `midimessage` from it as a controller would;
 * `window.testMidi.requests` lists the options of each access request. Text, not a function: the
 * benchmark runs through tsx, whose compiled functions call a helper the page lacks.
 */
export const INJECTED_WEB_MIDI = `(() => {
  class FakeInput extends EventTarget {
    id = 'test-input-1';
    name = 'Test Knob Box';
    manufacturer = 'Knob Studio tests';
    type = 'input';
    state = 'connected';
    connection = 'open';
  }
  const input = new FakeInput();
  const access = Object.assign(new EventTarget(), {
    inputs: new Map([[input.id, input]]),
    outputs: new Map(),
    sysexEnabled: false,
  });
  const requests = [];
  Object.defineProperty(Navigator.prototype, 'requestMIDIAccess', {
    configurable: true,
    value: (options) => {
      requests.push(options ?? null);
      return Promise.resolve(access);
    },
  });
  window.testMidi = {
    requests,
    send(bytes) {
      const data = new Uint8Array(bytes);
      const event = typeof MIDIMessageEvent === 'function'
        ? new MIDIMessageEvent('midimessage', { data })
        : Object.assign(new Event('midimessage'), { data });
      input.dispatchEvent(event);
    },
  };
})()`;

/** Sends a controller's bytes through the injected input. */
export const sendMidiScript = (bytes: number[]): string => `window.testMidi.send(${JSON.stringify(bytes)})`;
