package testenv

import (
	"flag"
	"runtime"
	"strconv"
)

// DefaultParallel makes n the default of -test.parallel, the number of
// parallel tests (t.Parallel) that run at once, where n is more than Go's
// default, GOMAXPROCS (2 on the CI machine). It is for packages whose tests
// mostly wait on child processes and on real or simulated time rather than
// use the CPU. An explicit -parallel still wins. Call it from TestMain,
// before Main.
func DefaultParallel(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set && n > runtime.GOMAXPROCS(0) {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
}
