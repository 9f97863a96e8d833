/** Bad usage of a command (an unknown option, a value out of its range): exit code 2 and one line naming it. */
export class UsageError extends Error {}
