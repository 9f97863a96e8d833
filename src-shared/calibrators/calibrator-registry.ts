import { KnobError } from '../errors';
import type { CalibratorDescriptor, SpecSchema } from './calibrator-descriptor';
import { conditionalCalibrator, dacCalibrator, procalCalibrator } from './feature-descriptors';
import {
  dirichletCalibrator,
  matrixCalibrator,
  ptsCalibrator,
  temperatureCalibrator,
  vectorCalibrator,
} from './logit-descriptors';
import {
  betaCalibrator,
  histogramBinningCalibrator,
  isotonicCalibrator,
  plattCalibrator,
  scalingBinningCalibrator,
} from './one-vs-rest-descriptors';

/**
 * The output calibrators of the app, one descriptor each (calibrator-descriptor.ts), in the order
 * the CLI, the desk and the comparison list them. Everything that differs by method reads this
 * list: CALIBRATION_METHODS, the spec schema (CalibratorSpecSchema is the union of these schemas),
 * the fit, the compiled row function, the labels and the feature rule; the deploy layer's
 * calibrator-graph-registry.ts must give an ONNX builder for each (its type requires one per
 * method). A new method is one descriptor file and one line here (and one graph builder there).
 *
 * Calibrators registered at run time (registerCalibrator, for extensions and tests) are looked up
 * after these; their methods are named `x-...`, so they never shadow a built-in one.
 */
export const BUILT_IN_CALIBRATORS = [
  temperatureCalibrator,
  vectorCalibrator,
  matrixCalibrator,
  dirichletCalibrator,
  ptsCalibrator,
  dacCalibrator,
  procalCalibrator,
  conditionalCalibrator,
  plattCalibrator,
  betaCalibrator,
  isotonicCalibrator,
  histogramBinningCalibrator,
  scalingBinningCalibrator,
] as const;

type BuiltIn = typeof BUILT_IN_CALIBRATORS;
// mapped over a type parameter, so a tuple maps to a tuple
type MethodsOf<T extends readonly unknown[]> = { [I in keyof T]: T[I] extends { method: infer M } ? M : never };
type SchemasOf<T extends readonly unknown[]> = { [I in keyof T]: T[I] extends { schema: infer S } ? S : never };
export type CalibrationMethod = BuiltIn[number]['method'];

/** The built-in methods, in the registry's order. */
export const CALIBRATION_METHODS = BUILT_IN_CALIBRATORS.map((d) => d.method) as unknown as MethodsOf<BuiltIn>;

/** The spec schemas, in the registry's order (the options of CalibratorSpecSchema). */
export const CALIBRATOR_SPEC_SCHEMAS = BUILT_IN_CALIBRATORS.map((d) => d.schema) as unknown as SchemasOf<BuiltIn>;

/** The name of a method registered at run time. */
export type ExtensionMethod = `x-${string}`;
/** A spec of a method registered at run time (its descriptor's schema says the rest). */
export type ExtensionCalibratorSpec = { method: ExtensionMethod };

const builtIn = new Map<string, CalibratorDescriptor>(BUILT_IN_CALIBRATORS.map((d) => [d.method, d]));
const extensions = new Map<string, CalibratorDescriptor>();

/**
 * Registers a calibrator at run time (an extension, or a test's): its descriptor, checked like a
 * built-in one (`satisfies CalibratorDescriptor<typeof Schema>`), its method named `x-...` and not
 * taken. It is then fitted, applied, described and checked like any other (fitCalibrator,
 * compileCalibrator, calibrateLogits, ...); its specs are parsed by its own schema
 * (calibratorDescriptor(method).schema), not by CalibratorSpecSchema, which holds the built-in
 * ones (settings files and bundles carry those). The deploy layer's registerCalibrator also takes
 * its step-graph builder. Returns a function that removes it again.
 */
export function registerCalibratorDescriptor<S extends SpecSchema>(
  descriptor: CalibratorDescriptor<S> & { method: ExtensionMethod },
): () => void {
  const method: string = descriptor.method;
  if (!/^x-[a-z0-9-]+$/.test(method))
    throw new KnobError(
      'INVALID_INPUT',
      `a registered calibrator's method is named x-NAME (a-z, 0-9, -), not '${method}'`,
    );
  if (extensions.has(method)) throw new KnobError('INVALID_INPUT', `the calibrator '${method}' is registered already`);
  extensions.set(method, descriptor as unknown as CalibratorDescriptor);
  return () => {
    extensions.delete(method);
  };
}

/** The descriptor of a built-in method, typed by its spec. */
export function builtInCalibrator<M extends CalibrationMethod>(method: M): Extract<BuiltIn[number], { method: M }> {
  return builtIn.get(method) as Extract<BuiltIn[number], { method: M }>;
}

/** The descriptor of a method, built in or registered; refuses one that is neither. */
export function calibratorDescriptor(method: string): CalibratorDescriptor {
  const descriptor = builtIn.get(method) ?? extensions.get(method);
  if (descriptor === undefined)
    throw new KnobError('INVALID_SETTINGS', `no output calibrator '${method}' is known (or registered)`);
  return descriptor;
}
