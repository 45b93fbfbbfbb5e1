package benchproc

import (
	"os/exec"
	"slices"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		in := slices.Clone(c.in)
		if got := Median(c.in); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
		}
		if !slices.Equal(in, c.in) {
			t.Errorf("Median reordered its argument: %v", c.in)
		}
	}
}

func TestStartCollect(t *testing.T) {
	p, err := Start(exec.Command("/bin/sh", "-c", "echo one; echo two; exit 3"))
	if err != nil {
		t.Fatal(err)
	}
	lines, err := p.Collect()
	if !slices.Equal(lines, []string{"one", "two"}) {
		t.Errorf("lines %q", lines)
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
		t.Errorf("exit error %v, want status 3", err)
	}
}
