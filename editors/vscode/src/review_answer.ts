// The answer to `rein/reviewEdit` as this extension sends it: the shared
// shape (protocol.ts) plus the text the user left when they edited the
// proposal before accepting it. Kept apart from protocol.ts, which mirrors
// the server's other messages.

import type { ReviewAnswer } from './protocol';

export interface EditedReviewAnswer extends ReviewAnswer {
    /** With `accept`: the proposal as the user edited it (the server
     * applies it and tells the model what they changed). Absent: the
     * proposal as Rein made it. */
    text?: string;
}
