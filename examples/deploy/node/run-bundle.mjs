#!/usr/bin/env node
/**
 * A reference consumer of Knob Studio bundles: runs a tuned calibrator without Knob Studio.
 *
 *   node run-bundle.mjs NAME.knob.zip FRAMES [--fps F]
 *
 * FRAMES is a folder of PNG/JPEG images (read in name order, timestamps i / fps) or a video file
 * (its frames' own timestamps). The bundle is checked first: every member's SHA-256 against the
 * manifest, and the format's major version. Frames are decoded and scaled to the model's input by
 * ffmpeg (on PATH), then each one goes through deploy/step.onnx with onnxruntime-node, the gate
 * state carried from frame to frame as the app carries it. One JSON line per frame on stdout:
 * {"frame", "t", "top1", "label", "p", "gate", "uStar", "probabilities"}.
 *
 * Dependencies: onnxruntime-node and yauzl (npm), ffmpeg and ffprobe (on PATH).
 */
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import yauzl from 'yauzl';

const SUPPORTED_MAJOR = 1;

function fail(message) {
  process.stderr.write(`run-bundle: ${message}\n`);
  process.exit(1);
}

/** Every member of the zip, by name (yauzl checks names and sizes as it reads). */
async function readZip(path) {
  const zip = await yauzl.fromBufferPromise(readFileSync(path), { validateEntrySizes: true, strictFileNames: true });
  const members = new Map();
  for await (const entry of zip.eachEntry()) {
    const chunks = [];
    for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk);
    members.set(entry.fileName, Buffer.concat(chunks));
  }
  return members;
}

/** The bundle's manifest after checking the format version and every member's SHA-256. */
function checkedManifest(members, path) {
  const raw = members.get('manifest.json');
  if (raw === undefined) fail(`${path}: no manifest.json`);
  const manifest = JSON.parse(raw.toString('utf8'));
  if (manifest.format !== 'knob-bundle') fail(`${path}: not a Knob Studio bundle`);
  const major = Number(String(manifest.formatVersion).split('.')[0]);
  if (!(major <= SUPPORTED_MAJOR))
    fail(`${path}: bundle format ${manifest.formatVersion} is newer than this consumer reads`);
  for (const [name, { sha256, bytes }] of Object.entries(manifest.members)) {
    const member = members.get(name);
    if (member === undefined || member.length !== bytes)
      fail(`${path}: member ${name} is missing or has the wrong size`);
    if (createHash('sha256').update(member).digest('hex') !== sha256)
      fail(`${path}: member ${name} does not match its SHA-256`);
  }
  if (manifest.deploy.stepGraph === null) fail(`${path}: no step graph (${manifest.deploy.stepGraphNote})`);
  return manifest;
}

/** Raw frames (H x W x C bytes each) and their timestamps, decoded and scaled by ffmpeg. */
function readFrames(source, input, fps) {
  const pixelFormat = input.channels === 1 ? 'gray' : 'rgb24';
  const frameBytes = input.width * input.height * input.channels;
  const decode = (args) => {
    const out = spawnSync(
      'ffmpeg',
      [
        '-v',
        'error',
        ...args,
        '-vf',
        `scale=${input.width}:${input.height}`,
        '-pix_fmt',
        pixelFormat,
        '-f',
        'rawvideo',
        '-',
      ],
      {
        maxBuffer: 1 << 30,
      },
    );
    if (out.status !== 0) fail(`ffmpeg could not decode ${args.at(-1)}: ${out.stderr.toString().trim()}`);
    return out.stdout;
  };
  if (statSync(source).isDirectory()) {
    const files = readdirSync(source)
      .filter((f) => /\.(png|jpe?g)$/i.test(f))
      .sort();
    const frames = files.map((f) => decode(['-i', join(source, f)]));
    return { frames, timestamps: frames.map((_, i) => i / fps) };
  }
  const bytes = decode(['-i', source]);
  const probe = spawnSync('ffprobe', [
    '-v',
    'error',
    '-select_streams',
    'v:0',
    '-show_entries',
    'frame=pts_time',
    '-of',
    'csv=p=0',
    source,
  ]);
  const timestamps = probe.stdout.toString().trim().split('\n').map(Number);
  const frames = [];
  for (let at = 0; at + frameBytes <= bytes.length; at += frameBytes) frames.push(bytes.subarray(at, at + frameBytes));
  return { frames, timestamps: timestamps.slice(0, frames.length) };
}

async function main() {
  const [bundlePath, source, ...rest] = process.argv.slice(2);
  if (bundlePath === undefined || source === undefined) fail('usage: run-bundle.mjs NAME.knob.zip FRAMES [--fps F]');
  const members = await readZip(bundlePath);
  const manifest = checkedManifest(members, bundlePath);
  const fps = rest[0] === '--fps' ? Number(rest[1]) : manifest.timing.frameRateHz;
  const { input, labels } = manifest.model;
  const session = await ort.InferenceSession.create(members.get(manifest.deploy.stepGraph));
  const { frames, timestamps } = readFrames(source, input, fps);
  const continuous = manifest.gate.mode === 'continuous';
  const column = (value) => new ort.Tensor('float64', Float64Array.of(value), [1, 1]);
  // a stream starts at rest, its first interval the nominal one (deploy/README.md); a
  // condition-aware calibrator's hysteresis adds condition and condition_run where the graph has them
  const start = { g: manifest.gate.g0, v: 0, u_prev: manifest.gate.g0, condition: -1, condition_run: 0 };
  const stateNames = Object.keys(start).filter((name) => session.inputNames.includes(name));
  let state = Object.fromEntries(stateNames.map((name) => [name, column(start[name])]));
  for (let i = 0; i < frames.length; i++) {
    const feeds = {
      frames: new ort.Tensor('uint8', new Uint8Array(frames[i]), [1, input.height, input.width, input.channels]),
    };
    if (continuous)
      Object.assign(feeds, state, {
        dt: column(i === 0 ? 1 / manifest.timing.frameRateHz : timestamps[i] - timestamps[i - 1]),
      });
    const out = await session.run(feeds);
    if (continuous) state = Object.fromEntries(stateNames.map((name) => [name, out[`${name}_next`]]));
    const probabilities = Array.from(out.probabilities.data);
    const top1 = probabilities.indexOf(Math.max(...probabilities));
    process.stdout.write(
      `${JSON.stringify({ frame: i, t: timestamps[i], top1, label: labels[top1] ?? String(top1), p: probabilities[top1], gate: out.gate.data[0], uStar: out.u_star.data[0], probabilities })}\n`,
    );
  }
}

await main();
