/** What every calibrator's fit reports: what it minimised, to what, and whether it converged. */
export interface FitReport {
  method: string;
  objectiveName: string;
  objective: number;
  iterations: number;
  converged: boolean;
}
