/** A setting that could not be used: which key, and why (never its value). */
export interface Problem {
    key: string;
    message: string;
}
