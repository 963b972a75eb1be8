package targets

import (
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	var sb strings.Builder
	all := Write(&sb, "measured", []Target{
		{Goal: "a", Measured: "1", Met: true},
		{Goal: "b", Measured: "2"},
		{Goal: "c", Measured: "not measured", Missing: true},
	})
	want := "| target | measured | |\n|---|---|---|\n| a | 1 | met |\n| b | 2 | **not met** |\n| c | not measured | not measured |\n"
	if all || sb.String() != want {
		t.Errorf("all %v, table:\n%s\nwant:\n%s", all, sb.String(), want)
	}
	sb.Reset()
	if !Write(&sb, "m", []Target{{Goal: "a", Met: true}}) {
		t.Error("every target met, Write says not")
	}
}

func TestThousands(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 999: "999", 1000: "1,000", 1234567.4: "1,234,567", 999.5: "1,000", -123: "-123", -1234: "-1,234"} {
		if got := Thousands(in); got != want {
			t.Errorf("Thousands(%v) = %q, want %q", in, got, want)
		}
	}
}
