package relations

import "testing"

func TestMembersSharesAreExactAndRoundedOnce(t *testing.T) {
	ms, total, err := Members([]Weighted{{"c", "0.5"}, {"a", "3"}, {"b", "1"}, {"d", "0.5"}})
	if err != nil {
		t.Fatal(err)
	}
	if total != "5" {
		t.Fatalf("total %s", total)
	}
	want := []Member{{"a", "3", 600000000000, 1}, {"b", "1", 200000000000, 2}, {"c", "0.5", 100000000000, 3}, {"d", "0.5", 100000000000, 3}}
	for i := range want {
		if ms[i] != want[i] {
			t.Fatalf("member %d: %+v, want %+v", i, ms[i], want[i])
		}
	}
	// 2/3 rounds half up once: 0.666666666667, never 0.666666666666.
	ms, total, _ = Members([]Weighted{{"x", "2"}, {"y", "1"}})
	if Format(ms[0].Share) != "0.666666666667" || Format(ms[1].Share) != "0.333333333333" || total != "3" {
		t.Fatalf("%+v %s", ms, total)
	}
	// Yocto-sized weights keep their precision.
	ms, total, _ = Members([]Weighted{{"x", "1000000000000000000000000"}, {"y", "3000000000000000000000000.25"}})
	if ms[0].Account != "y" || Format(ms[0].Share) != "0.75" || total != "4000000000000000000000000.25" {
		t.Fatalf("%+v %s", ms, total)
	}
	if _, _, err := Members([]Weighted{{"x", "1e3"}}); err == nil {
		t.Fatal("an exponent is not a decimal")
	}
	if _, _, err := Members([]Weighted{{"x", "1"}, {"x", "2"}}); err == nil {
		t.Fatal("an account twice")
	}
	ms, _, _ = Members([]Weighted{{"x", "0"}, {"y", "0"}})
	if ms[0].Share != 0 || ms[0].Rank != 1 || ms[1].Rank != 1 {
		t.Fatalf("a zero total: %+v", ms)
	}
}

func TestJaccardAndFormat(t *testing.T) {
	for _, c := range []struct {
		shared, a, b int64
		want         string
	}{{2, 4, 3, "0.4"}, {1, 4, 3, "0.166666666667"}, {3, 3, 3, "1"}, {0, 3, 3, "0"}} {
		if got := Format(Jaccard(c.shared, c.a, c.b)); got != c.want {
			t.Fatalf("jaccard(%d, %d, %d) = %s, want %s", c.shared, c.a, c.b, got, c.want)
		}
	}
	if Format(1) != "0.000000000001" {
		t.Fatal(Format(1))
	}
}
