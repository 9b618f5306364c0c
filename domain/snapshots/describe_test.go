package snapshots

import (
	"fmt"
	"testing"
)

func TestDescribe(t *testing.T) {
	s := sample()
	s.Accounts = append(s.Accounts, Account{ID: "near:mainnet:carol.near", Label: "carol", Weight: "2.5", Groups: []string{"council", "all"}})
	d, err := Describe("abc", s, 2)
	if err != nil {
		t.Fatal(err)
	}
	if d.TotalWeight != "6" || d.Count != 3 {
		t.Fatalf("total %s count %d", d.TotalWeight, d.Count)
	}
	// Ties at 2.5 go by id: bob before carol.
	if len(d.Top) != 2 || d.Top[0].ID != "near:mainnet:bob.near" || d.Top[1].ID != "near:mainnet:carol.near" || d.Top[0].Share != 2.5/6 {
		t.Fatalf("top %+v", d.Top)
	}
	if d.Groups[0].ID != "council" || d.Groups[0].Count != 2 || d.Groups[0].Weight != "3.5" || d.Groups[1].Weight != "2.5" {
		t.Fatalf("groups %+v", d.Groups)
	}
	if d, _ := Describe("x", Snapshot{}, 10); d.TotalWeight != "0" || len(d.Top) != 0 {
		t.Fatalf("empty %+v", d)
	}
}

func TestShiftDecimal(t *testing.T) {
	cases := []struct {
		raw  string
		dec  int
		want string
	}{
		{"1500000", 6, "1.5"}, {"1", 6, "0.000001"}, {"0", 24, "0"}, {"000", 2, "0"},
		{"1000000000000000000000000", 24, "1"}, {"1000000000000000000000001", 24, "1.000000000000000000000001"},
		{"42", 0, "42"}, {"350500000000000000000000000", 24, "350.5"},
	}
	for _, c := range cases {
		got, err := ShiftDecimal(c.raw, c.dec)
		if err != nil || got != c.want || !IsDecimal(got) {
			t.Errorf("ShiftDecimal(%s, %d) = %s, %v; want %s", c.raw, c.dec, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "-1", "1.5", "1e3"} {
		if _, err := ShiftDecimal(bad, 6); err == nil {
			t.Errorf("ShiftDecimal(%q) should fail", bad)
		}
	}
}

func TestKeepTop(t *testing.T) {
	s := sample()
	s.Accounts = nil
	for i := range 10 {
		s.Accounts = append(s.Accounts, Account{ID: fmt.Sprintf("near:mainnet:a%d.near", i), Weight: fmt.Sprint(i % 4), Groups: []string{}})
	}
	KeepTop(&s, 4)
	if len(s.Accounts) != 4 || s.Source.Cut == nil || s.Source.Cut.Total != 10 || s.Source.Cut.Kept != 4 {
		t.Fatalf("cut %+v, %d accounts", s.Source.Cut, len(s.Accounts))
	}
	// Weights 3,3,2,2 kept: a3, a7 (3) and a2, a6 (2), in their first order.
	want := []string{"near:mainnet:a2.near", "near:mainnet:a3.near", "near:mainnet:a6.near", "near:mainnet:a7.near"}
	for i, a := range s.Accounts {
		if a.ID != want[i] {
			t.Fatalf("kept %v", s.Accounts)
		}
	}
	if ps := Validate(s); len(ps) != 0 {
		t.Fatalf("a cut snapshot is valid: %v", ps)
	}
}
