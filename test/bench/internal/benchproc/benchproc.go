// Package benchproc holds what the benchmark programs of test/bench share:
// running a peer program and reading its report lines, and the median of
// repeated figures.
package benchproc

import (
	"bufio"
	"os/exec"
	"slices"
)

// Proc is a started program whose stdout is read line by line.
type Proc struct {
	cmd   *exec.Cmd
	lines chan string
}

// Start starts cmd, whose Stdout must be unset, and reads its output.
func Start(cmd *exec.Cmd) (*Proc, error) {
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Proc{cmd: cmd, lines: make(chan string, 1024)}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	return p, nil
}

// Collect returns every output line once the program has exited, and its
// exit error.
func (p *Proc) Collect() ([]string, error) {
	var ls []string
	for l := range p.lines {
		ls = append(ls, l)
	}
	return ls, p.cmd.Wait()
}

// Median returns the median of xs (the mean of the middle two for an even
// count), 0 for none.
func Median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[len(s)/2]
}
