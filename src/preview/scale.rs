//! Scaling down as rows arrive: a box filter over source rows, so a reader
//! of a 16000×16000 image holds only one output row of sums at a time.
