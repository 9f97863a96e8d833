import type { AlarmStatistic } from './alarm-statistic';

/**
 * Two-sided CUSUM on a standardised signal (Page 1954): with z_t = (x_t - mean) / sd of the
 * reference, S+_t = max(0, S+_{t-1} + z_t - k) and S-_t = max(0, S-_{t-1} - z_t - k); the statistic
 * is max(S+, S-), in reference standard deviations. k = 0.5 is the classic slack, quickest for a
 * shift of one standard deviation in either direction. A sequential detector: every frame is tested,
 * and a slow drift of the mean adds up until it crosses the threshold. S+_t = U_t - min_{s<=t} U_s
 * with U_t = sum_{i<=t} (z_i - k): the Page-Hinkley statistic (Hinkley 1971) with the reference's
 * mean, so that detector is this one.
 */
export class TwoSidedCusum implements AlarmStatistic {
  private up = 0;
  private down = 0;

  constructor(
    private readonly referenceMean: number,
    private readonly referenceSd: number,
    private readonly slackSd = DEFAULT_CUSUM_SLACK_SD,
  ) {
    if (!(referenceSd > 0)) throw new RangeError(`a CUSUM needs a reference that varies (sd ${referenceSd})`);
  }

  encode(x: number): number {
    return (x - this.referenceMean) / this.referenceSd;
  }

  /** None: encode() is a subtraction and a division, cheaper than a table of doubles a path. */
  codeTable(): null {
    return null;
  }

  nextEncoded(z: number): number {
    this.up = Math.max(0, this.up + z - this.slackSd);
    this.down = Math.max(0, this.down - z - this.slackSd);
    return Math.max(this.up, this.down);
  }

  reset(): void {
    this.up = 0;
    this.down = 0;
  }
}

export const DEFAULT_CUSUM_SLACK_SD = 0.5;

export const CUSUM_IDENTITY = `two-sided CUSUM (Page 1954) of the standardised signal, slack ${DEFAULT_CUSUM_SLACK_SD} sd`;
