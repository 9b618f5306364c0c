package postgres

// PickSlice and DailySlices let the ledger's tests aim reservations at a
// slice of the day's cap.
var PickSlice = pickSlice

const DailySlices = dailySlices
