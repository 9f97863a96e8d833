/**
 * Per-frame label files (issue 27, item 2): every CSV and JSON form, matching names (folding, a
 * class map, label_index), every refusal with the row it names, and the bounds (a range over the
 * whole recording, irregular timestamps, the row limit).
 */
import { describe, expect, it } from 'vitest';
import { KnobError } from '../../src-shared/errors';
import {
  labelFileFormatOf,
  parseLabelFile,
  resolveLabelFile,
  type LabelFileFormat,
} from '../../src-shared/labels/label-file';

const NAMES = ['airplane', 'automobile', 'bird', 'cat', 'deer', 'dog'];

/** n frames at 10 fps. */
function recording(n: number, timestamps?: number[]) {
  const ts =
    timestamps === undefined ? Float64Array.from({ length: n }, (_, i) => i / 10) : Float64Array.from(timestamps);
  return { frameCount: n, timestampsSeconds: ts, labelNames: NAMES, labelsFromMetadata: true };
}

function load(text: string, format: LabelFileFormat, rec = recording(20), classMap: Map<string, string> | null = null) {
  const imported = resolveLabelFile(parseLabelFile(text, 'labels.x', format), rec, classMap, 'labels.x');
  return { ...imported, pairs: [...imported.frames].map((f, i) => [f, imported.classIndices[i]]) };
}

/** The message of the INVALID_INPUT that `run` throws (failing the test when it throws nothing else). */
function refusal(run: () => unknown): string {
  let thrown: unknown = null;
  try {
    run();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(KnobError);
  expect((thrown as KnobError).code).toBe('INVALID_INPUT');
  return (thrown as KnobError).message;
}

const refused = (text: string, format: LabelFileFormat, rec = recording(20)): string =>
  refusal(() => load(text, format, rec));

describe('label file formats', () => {
  it('tells the format by extension', () => {
    expect(labelFileFormatOf('a/b/Labels.CSV')).toBe('csv');
    expect(labelFileFormatOf('labels.json')).toBe('json');
    expect(labelFileFormatOf('labels.txt')).toBeNull();
    expect(labelFileFormatOf('csv')).toBeNull();
  });

  it('reads CSV keyed by frame, with comments, blank lines, quotes and extra columns', () => {
    const text = '\uFEFF# exported by hand\n\nFrame, label ,note\n3,cat,x\r\n1,"dog","a ""quoted"", note"\n# done\n';
    const got = load(text, 'csv');
    expect(got.pairs).toEqual([
      [1, 5],
      [3, 3],
    ]);
    expect(got.key).toBe('frame');
    expect(got.rows).toBe(2);
    expect(got.mapping?.rule).toBe('by-name');
    expect(parseLabelFile(text, 'l.csv', 'csv').rows.map((r) => r.line)).toEqual([4, 5]);
    expect(parseLabelFile('frame,label\n0, "a ""b"", c" \n', 'l.csv', 'csv').rows[0]!.label).toBe('a "b", c');
    expect(refused('frame,label\n0,"cat" x\n', 'csv')).toMatch(/line 2: text after a quoted cell/);
  });

  it('reads CSV frame ranges, inclusive, and lets overlapping rows of one class agree', () => {
    const got = load('start_frame,end_frame,label\n2,4,cat\n4,5,cat\n10,10,bird\n', 'csv');
    expect(got.pairs).toEqual([
      [2, 3],
      [3, 3],
      [4, 3],
      [5, 3],
      [10, 2],
    ]);
  });

  it('reads CSV times to the nearest frame, and half-open time ranges', () => {
    expect(load('time,label\n0.31,cat\n1.04,dog\n', 'csv').pairs).toEqual([
      [3, 3],
      [10, 5],
    ]);
    const ranges = load('start_time,end_time,label\n0.2,0.5,cat\n1.5,1.7,dog\n', 'csv');
    expect(ranges.key).toBe('time');
    // [0.2, 0.5) holds frames 2, 3, 4 (0.5 is frame 5, excluded)
    expect(ranges.pairs).toEqual([
      [2, 3],
      [3, 3],
      [4, 3],
      [15, 5],
      [16, 5],
    ]);
  });

  it('reads a time range up to the end of the last frame (one interval past its timestamp)', () => {
    // 30 fps: the last frame is at 9.9667 s; [0, 10) is the whole clip
    const rec = recording(
      300,
      Array.from({ length: 300 }, (_, i) => i / 30),
    );
    expect(load('start_time,end_time,label\n0,10,cat\n', 'csv', rec).frames.length).toBe(300);
  });

  it('reads a JSON array and a {labels} object alike, naming rows by their line', () => {
    const array = '[\n  {"frame": 3, "label": "cat"},\n  {"frame": 5, "label_index": 2, "note": "x"}\n]';
    expect(load(array, 'json').pairs).toEqual([
      [3, 3],
      [5, 2],
    ]);
    const object =
      '{"source": "hand", "other": [1, 2],\n "labels": [\n  {"start_time": 0.15, "end_time": 0.4, "label_index": 2},\n  {"start_time": 1.5, "end_time": 1.6, "label": "Dog", "frame": null}\n]}';
    expect(load(object, 'json').pairs).toEqual([
      [2, 2],
      [3, 2],
      [15, 5],
    ]);
    expect(parseLabelFile(object, 'l.json', 'json').rows.map((r) => r.line)).toEqual([3, 4]);
  });

  it('reads label_index in CSV, and leaves the mapping null when no row names a class', () => {
    const got = load('frame,label_index\n0,5\n1,0\n', 'csv');
    expect(got.pairs).toEqual([
      [0, 5],
      [1, 0],
    ]);
    expect(got.mapping).toBeNull();
  });
});

describe('class names', () => {
  it('folds names and resolves each distinct name once', () => {
    const got = load('frame,label\n0,CAT\n1,cat\n2,Auto-Mobile\n', 'csv');
    expect(got.pairs).toEqual([
      [0, 3],
      [1, 3],
      [2, 1],
    ]);
    expect(got.mapping?.pairs.map((p) => p.sourceName)).toEqual(['CAT', 'cat', 'Auto-Mobile']);
  });

  it('uses a class map, and refuses names the model does not know listing both sets', () => {
    const got = load(
      'frame,label\n0,kitty\n1,car\n',
      'csv',
      recording(20),
      new Map([
        ['kitty', 'cat'],
        ['car', 'automobile'],
      ]),
    );
    expect(got.pairs).toEqual([
      [0, 3],
      [1, 1],
    ]);
    expect(got.mapping?.rule).toBe('class-map');
    expect(refused('frame,label\n0,kitty\n', 'csv')).toMatch(
      /labels\.x: class names the model does not know: 'kitty'.*'airplane'/,
    );
  });

  it('refuses a label_index the model does not have, and a number under label', () => {
    expect(refused('frame,label_index\n0,6\n', 'csv')).toMatch(
      /line 2: label_index 6 is not a class of the model \(it has 6: 0\.\.5\)/,
    );
    expect(refused('frame,label_index\n0,1.5\n', 'csv')).toMatch(/line 2: label_index is not a non-negative whole/);
    expect(refused('[{"frame": 0, "label": 3}]', 'json')).toMatch(/label is a class name .* 'label_index'/);
    expect(refused('[{"frame": 0, "label": "cat", "label_index": 3}]', 'json')).toMatch(/exactly one of 'label'/);
  });
});

describe('refusals', () => {
  it('refuses a header without exactly one key form and one label column, naming it', () => {
    expect(refused('frm,label\n0,cat\n', 'csv')).toMatch(/line 1: the header 'frm,label' needs exactly one key.*none/);
    expect(refused('frame,time,label\n0,0,cat\n', 'csv')).toMatch(
      /the header 'frame,time,label' needs exactly one key.*frame, time/,
    );
    expect(refused('start_frame,label\n0,cat\n', 'csv')).toMatch(/has 'start_frame' without 'end_frame'/);
    expect(refused('frame,label,label_index\n0,cat,3\n', 'csv')).toMatch(/needs exactly one label column/);
    expect(refused('frame\n0\n', 'csv')).toMatch(/needs exactly one label column/);
    expect(refused('frame,label,Frame\n0,cat,1\n', 'csv')).toMatch(/names 'frame' twice/);
    expect(refused('# only a comment\n', 'csv')).toMatch(/no header row/);
    expect(refused('frame,label\n', 'csv')).toMatch(/no label rows/);
  });

  it('refuses malformed CSV lines, naming the line', () => {
    expect(refused('frame,label\n0,cat\n1\n', 'csv')).toMatch(/line 3: 1 cells where the header has 2/);
    expect(refused('frame,label\n0,"cat\n', 'csv')).toMatch(/line 2: a quoted cell is not closed/);
    expect(refused('frame,label\n0,ca"t\n', 'csv')).toMatch(/line 2: a double quote inside an unquoted cell/);
    expect(refused('frame,label\n0, \n', 'csv')).toMatch(/line 2: label is empty/);
  });

  it('refuses JSON that is not rows, and rows with mixed key forms', () => {
    expect(refused('{"rows": []}', 'json')).toMatch(/an array of rows or an object/);
    expect(refused('[]', 'json')).toMatch(/no label rows/);
    expect(refused('[{"frame": 0, "label": "cat"}, 3]', 'json')).toMatch(/row 2 is not an object/);
    expect(refused('[\n{"frame": 0, "label": "cat"},\n{"time": 0.5, "label": "cat"}\n]', 'json')).toMatch(
      /line 3: row 2 is keyed by time, the first row \(line 2\) by frame; all rows use one key form/,
    );
    expect(refused('[{"frame": "3", "label": "cat"}]', 'json')).toMatch(/frame is not a number/);
    expect(refused('[[[', 'json')).toMatch(/not valid JSON/);
  });

  it('refuses non-integer, negative and non-finite keys, and reversed ranges', () => {
    expect(refused('frame,label\n1.5,cat\n', 'csv')).toMatch(/line 2: frame 1\.5 is not a whole frame index/);
    expect(refused('frame,label\n-1,cat\n', 'csv')).toMatch(/line 2: frame -1 is negative/);
    expect(refused('frame,label\nNaN,cat\n', 'csv')).toMatch(/line 2: frame is not a number/);
    expect(refused('time,label\nInfinity,cat\n', 'csv')).toMatch(/time is not a number/);
    expect(refused('time,label\n-0.5,cat\n', 'csv')).toMatch(/time -0\.5 s is negative/);
    expect(refused('[{"time": 1e999, "label": "cat"}]', 'json')).toMatch(/time is not a finite number/);
    expect(refused('start_frame,end_frame,label\n5,4,cat\n', 'csv')).toMatch(/start_frame 5 is after end_frame 4/);
    expect(refused('start_time,end_time,label\n1,1,cat\n', 'csv')).toMatch(/start_time 1 s is not before end_time 1 s/);
  });

  it('refuses frames and times outside the recording, naming the row and the span', () => {
    expect(refused('frame,label\n0,cat\n20,cat\n', 'csv')).toMatch(
      /line 3: frame 20 outside the recording \(20 frames: 0\.\.19\)/,
    );
    expect(refused('start_frame,end_frame,label\n0,1000000000000,cat\n', 'csv')).toMatch(
      /line 2: frames 0\.\.1000000000000 outside the recording \(20 frames/,
    );
    expect(refused('time,label\n2.5,cat\n', 'csv')).toMatch(
      /line 2: time 2\.5 s is outside; the recording spans 0 s to 1\.9 s \(20 frames, median interval 0\.1 s\)/,
    );
    expect(refused('start_time,end_time,label\n0,1000000000000,cat\n', 'csv')).toMatch(
      /line 2: times \[0 s, 1000000000000 s\) are outside/,
    );
    expect(refused('start_time,end_time,label\n0.51,0.55,cat\n', 'csv')).toMatch(/hold no frame's timestamp/);
    expect(refused('time,label\n0.5,cat\n', 'csv', recording(1, [0]))).toMatch(/1 frame\(s\), too few/);
  });

  it('refuses a time far from every frame (a gap in the recording)', () => {
    // 10 fps with a 2 s pause after frame 4: 0.8 s is 0.4 s from frame 4, the median interval 0.1 s
    const rec = recording(10, [0, 0.1, 0.2, 0.3, 0.4, 2.4, 2.5, 2.6, 2.7, 2.8]);
    expect(refused('time,label\n0.8,cat\n', 'csv', rec)).toMatch(
      /line 2: time 0\.8 s is 0\.4 s from the nearest frame \(4 at 0\.4 s\), more than half the median frame interval \(0\.05 s\)/,
    );
    expect(load('time,label\n0.44,cat\n2.37,dog\n', 'csv', rec).pairs).toEqual([
      [4, 3],
      [5, 5],
    ]);
  });

  it('refuses rows that give a frame two classes, naming both rows', () => {
    expect(refused('start_frame,end_frame,label\n5,9,dog\n0,5,cat\n', 'csv')).toMatch(
      /line 3 gives frame 5 'cat' \(class 3, 'cat'\), line 2 gives it 'dog' \(class 5, 'dog'\)/,
    );
    expect(refused('frame,label\n7,cat\n7,bird\n', 'csv')).toMatch(/line 2 gives frame 7 .*line 3 gives it 'bird'/);
    expect(
      refused(
        '[{"start_time": 0.25, "end_time": 0.35, "label_index": 1},\n{"start_time": 0, "end_time": 1, "label": "cat"}]',
        'json',
      ),
    ).toMatch(/line 2 gives frame 3 'cat'.*line 1 gives it class index 1 \('automobile'\)/);
    // a later row starting inside an earlier run of another class, past a row of its own class
    expect(refused('start_frame,end_frame,label\n0,9,cat\n2,3,cat\n4,4,dog\n', 'csv')).toMatch(
      /line 2 gives frame 4 'cat'.*line 4 gives it 'dog'/,
    );
  });

  it('refuses more rows than the limit, in either format', () => {
    const csv = `frame,label\n${Array.from({ length: 4 }, (_, i) => `${i},cat`).join('\n')}\n`;
    expect(parseLabelFile(csv, 'l.csv', 'csv', 4).rows).toHaveLength(4);
    expect(refusal(() => parseLabelFile(csv, 'l.csv', 'csv', 3))).toMatch(
      /l\.csv: more than 3 label rows \(the limit\)/,
    );
    const json = JSON.stringify(Array.from({ length: 4 }, (_, i) => ({ frame: i, label: 'cat' })));
    expect(refusal(() => parseLabelFile(json, 'l.json', 'json', 3))).toMatch(/4 label rows, more than 3 \(the limit\)/);
  });
});

describe('bounds', () => {
  it('resolves a range over all of 100,000 frames to 100,000 entries, deduplicated across rows', () => {
    const n = 100_000;
    const rec = recording(n);
    const text = `start_frame,end_frame,label\n0,${n - 1},cat\n0,${n - 1},Cat\n50,60,cat\n`;
    const got = resolveLabelFile(parseLabelFile(text, 'l.csv', 'csv'), rec, null, 'l.csv');
    expect(got.frames.length).toBe(n);
    expect(got.frames[0]).toBe(0);
    expect(got.frames[n - 1]).toBe(n - 1);
    expect(got.classIndices.every((c) => c === 3)).toBe(true);
  });

  it('allocates by the rows, not the recording, when a few rows label a very long one', () => {
    // 2e9 frames: arrays of the frame count would be gigabytes
    const rec = {
      frameCount: 2_000_000_000,
      timestampsSeconds: new Float64Array(0),
      labelNames: NAMES,
      labelsFromMetadata: true,
    };
    const got = resolveLabelFile(
      parseLabelFile('frame,label\n1999999999,cat\n5,dog\n', 'l.csv', 'csv'),
      rec,
      null,
      'l.csv',
    );
    expect([...got.frames]).toEqual([5, 1_999_999_999]);
    expect(got.frames.buffer.byteLength).toBeLessThan(64);
  });

  it('resolves times against irregular timestamps (a video pts) to the nearest frame', () => {
    // a variable frame rate: gaps of 33, 40, 25, 50 and 33 ms
    const pts = [0.0, 0.033, 0.073, 0.098, 0.148, 0.181];
    const rec = recording(pts.length, pts);
    const got = load('time,label_index\n0.045,1\n0.06,2\n0.09,3\n0.16,4\n', 'csv', rec);
    // 0.06 s is nearer the later frame (0.073), 0.045 s the earlier (0.033)
    expect(got.pairs).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
      [4, 4],
    ]);
    // the median gap is 33 ms: 0.05 s, 17 ms from frame 1, is refused even though it lies between frames
    expect(refused('time,label\n0.05,cat\n', 'csv', rec)).toMatch(
      /more than half the median frame interval \(0\.0165 s\)/,
    );
    // a range picks the frames whose pts fall inside
    expect(load('start_time,end_time,label\n0.03,0.1,cat\n', 'csv', rec).frames).toEqual(Int32Array.from([1, 2, 3]));
  });

  it('sorts the output by frame whatever the row order', () => {
    const got = load(
      '[{"frame": 9, "label": "cat"}, {"frame": 2, "label": "dog"}, {"frame": 5, "label": "cat"}]',
      'json',
    );
    expect(got.pairs).toEqual([
      [2, 5],
      [5, 3],
      [9, 3],
    ]);
  });
});
