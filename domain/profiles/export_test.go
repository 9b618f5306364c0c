package profiles

// Decoding is the process's decode budget, for a test to fill.
var Decoding = decoding
