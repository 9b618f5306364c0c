package postgres

// PickSlice and DailySlices let the ledger's tests aim reservations at a
// slice of the day's cap.
var PickSlice = pickSlice

const DailySlices = dailySlices

// DaySlice and Balance let a test check the re-balancing rule alone.
type DaySlice = daySlice

func NewDaySlice(limit, spent, held int64) DaySlice {
	return daySlice{limit: limit, spent: spent, held: held}
}

var Balance = balance

// UsedOf is what a slice holds and spent.
func UsedOf(s DaySlice) int64 { return s.spent + s.held }
