import { readFile } from 'node:fs/promises';
import { resourcePath } from '../files/resource-path';
import protobuf from 'protobufjs';
import { KnobError } from '../../../src-shared/errors';

/**
 * ONNX model metadata (producer, opset, metadata_props) read with protobufjs against the official
 * onnx.proto (resources/onnx, from the ONNX project, Apache-2.0). onnxruntime exposes input and
 * output shapes but not metadata_props, where the Knob contract, labels and input spec live.
 */
const ONNX_PROTO_PATH = resourcePath('onnx', 'onnx.proto');
let modelProto: protobuf.Type | null = null;

async function modelType(): Promise<protobuf.Type> {
  if (modelProto === null) {
    const root = protobuf.parse(await readFile(ONNX_PROTO_PATH, 'utf8'), { keepCase: true }).root;
    modelProto = root.lookupType('onnx.ModelProto');
  }
  return modelProto;
}

export interface OnnxMetadata {
  producerName: string;
  opsetVersion: number | null;
  properties: Record<string, string>;
}

export async function readOnnxMetadata(bytes: Uint8Array, source: string): Promise<OnnxMetadata> {
  let decoded: {
    producer_name?: string;
    opset_import?: { domain?: string; version?: number | { toNumber(): number } }[];
    metadata_props?: { key?: string; value?: string }[];
  };
  try {
    decoded = (await modelType()).decode(bytes) as unknown as typeof decoded;
  } catch (error) {
    throw new KnobError('INVALID_INPUT', `${source}: not an ONNX model (${(error as Error).message})`);
  }
  const opset = decoded.opset_import?.find((o) => !o.domain || o.domain === 'ai.onnx');
  const version = opset?.version;
  const properties: Record<string, string> = {};
  for (const entry of decoded.metadata_props ?? []) if (entry.key) properties[entry.key] = entry.value ?? '';
  return {
    producerName: decoded.producer_name ?? '',
    opsetVersion: version === undefined ? null : typeof version === 'number' ? version : version.toNumber(),
    properties,
  };
}
