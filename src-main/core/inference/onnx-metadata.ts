import { fromBinary } from '@bufbuild/protobuf';
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import { OperatorSetIdProtoSchema, StringStringEntryProtoSchema } from 'onnx-buf';
import { KnobError } from '../../../src-shared/errors';

/**
 * ONNX model metadata (producer, opset, metadata_props), read against ONNX's own schema as the
 * onnx-buf package compiles it (onnx.proto of ONNX 1.20). onnxruntime exposes input and output
 * shapes but not metadata_props, where the Knob contract, labels and input spec live.
 *
 * Only ModelProto's top-level fields are walked: the graph (field 7, the weights) is skipped by its
 * length prefix instead of being decoded, so reading the metadata of a large model costs no copy.
 */
export interface OnnxMetadata {
  producerName: string;
  opsetVersion: number | null;
  properties: Record<string, string>;
}

// Field numbers of onnx.ModelProto (onnx.proto).
const IR_VERSION = 1;
const PRODUCER_NAME = 2;
const GRAPH = 7;
const OPSET_IMPORT = 8;
const METADATA_PROPS = 14;

export function readOnnxMetadata(bytes: Uint8Array, source: string): OnnxMetadata {
  const reader = new BinaryReader(bytes);
  // properties without a prototype: a key from the file ('__proto__', 'constructor') stays data
  const metadata: OnnxMetadata = { producerName: '', opsetVersion: null, properties: Object.create(null) };
  let sawIrVersion = false;
  let sawGraph = false;
  try {
    while (reader.pos < reader.len) {
      const [field, wireType] = reader.tag();
      const expect = (type: WireType): void => {
        if (wireType !== type) throw new Error(`field ${field} has wire type ${wireType}, expected ${type}`);
      };
      switch (field) {
        case IR_VERSION:
          expect(WireType.Varint);
          reader.int64();
          sawIrVersion = true;
          break;
        case PRODUCER_NAME:
          expect(WireType.LengthDelimited);
          metadata.producerName = reader.string();
          break;
        case GRAPH:
          expect(WireType.LengthDelimited);
          reader.skip(wireType, field);
          sawGraph = true;
          break;
        case OPSET_IMPORT: {
          expect(WireType.LengthDelimited);
          const opset = fromBinary(OperatorSetIdProtoSchema, reader.bytes());
          if (opset.domain === '' || opset.domain === 'ai.onnx') metadata.opsetVersion = Number(opset.version);
          break;
        }
        case METADATA_PROPS: {
          expect(WireType.LengthDelimited);
          const entry = fromBinary(StringStringEntryProtoSchema, reader.bytes());
          if (entry.key !== '') metadata.properties[entry.key] = entry.value;
          break;
        }
        default:
          reader.skip(wireType, field);
      }
    }
  } catch (error) {
    throw new KnobError('INVALID_INPUT', `${source}: not an ONNX model (${(error as Error).message})`);
  }
  if (!sawIrVersion || !sawGraph) {
    throw new KnobError('INVALID_INPUT', `${source}: not an ONNX model (no ${sawIrVersion ? 'graph' : 'IR version'})`);
  }
  return metadata;
}
