import type { ApiParsedParams, ApiResult } from '../../../src-shared/api/contract';
import type { ModelDescription, ModelOptions } from '../../../src-shared/api/model-options';
import { stopIfCancelled } from '../../../src-shared/cancel-signal';
import { KnobError } from '../../../src-shared/errors';
import type { CallContext } from '../calls/call-context';
import type { Session } from '../session/session';
import { checkKnobModelOutput, writeKnobModelFiles } from '../use-cases/fit-heads';
import { FEATURE_CACHE_FOLDER, makeKnobModel } from '../use-cases/make-knob-model';
import { join } from 'node:path';

/**
 * "Make a Knob model" as the desk asks for it (issue 31): the loaded classifier, as it was loaded
 * (its preprocessing, labels and adapter as the desk shows them), made a Knob model over a labelled
 * dataset by the use case `knob fit-heads --data` runs too, and written with its card. The session's
 * model and recording are untouched (the use case runs its own inference process); the desk loads
 * the new model when the operator asks.
 */
export class KnobModels {
  /** `dataFolder`: the app's data folder, where the feature cache is kept (null: no cache). */
  constructor(
    private readonly session: Session,
    private readonly dataFolder: string | null,
  ) {}

  /**
   * One make at a time (each holds a model process and a dataset's features): a make asked for
   * while another runs (one just cancelled, still stopping) waits for it, then runs.
   */
  private previous: Promise<unknown> = Promise.resolve();

  make(params: ApiParsedParams<'model.makeKnob'>, call: CallContext): Promise<ApiResult<'model.makeKnob'>> {
    const made = this.previous.then(() => {
      stopIfCancelled(call.signal, 'making the Knob model was cancelled');
      return this.makeOne(params, call);
    });
    this.previous = made.catch(() => undefined);
    return made;
  }

  private async makeOne(
    params: ApiParsedParams<'model.makeKnob'>,
    call: CallContext,
  ): Promise<ApiResult<'model.makeKnob'>> {
    const model = this.session.requireModel().description;
    if (model.paths.length !== 1)
      throw new KnobError(
        'INVALID_INPUT',
        `a Knob model is made from one classifier; ${model.paths.join(' and ')} are two (load one of them)`,
      );
    await checkKnobModelOutput(params.outPath, model.paths[0]!);
    const made = await makeKnobModel(
      {
        model: optionsAsLoaded(model),
        dataPath: params.dataPath,
        featuresNode: params.featuresNode,
        seed: params.seed,
        cacheFolder: this.dataFolder === null ? null : join(this.dataFolder, FEATURE_CACHE_FOLDER),
      },
      call,
    );
    // a cancel that arrived during the last stage or the write: nothing is written
    stopIfCancelled(call.signal, 'making the Knob model was cancelled');
    await writeKnobModelFiles(params.outPath, made, call.signal);
    return { path: params.outPath, card: made.card, featuresFrom: made.featuresFrom };
  }
}

/** The options that load the model file as it is loaded now. */
function optionsAsLoaded(model: ModelDescription): ModelOptions {
  return {
    path: model.paths[0]!,
    contract: model.contract,
    input: model.input,
    ...(model.labelsSource === 'generated' ? {} : { labels: model.labelNames }),
    ...(model.adapter === null ? {} : { t0: model.adapter.t0, certaintyRule: model.adapter.certaintyRule }),
  };
}
