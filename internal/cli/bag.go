package cli

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/bag"
	"github.com/fsmnodes/fsmnodes/internal/ros"
)

func bagVerbs() map[string]verb {
	return map[string]verb{
		"bag record": {
			usage: "bag record [TOPIC ...] [--services SERVICE ...] [-a] [--all-topics] [--all-services] [-e REGEX] [-x REGEX] [-o DIR] [-b BYTES] [-d SECONDS] [--snapshot-duration S]",
			help: "Record topics into a bag in rosbag2's MCAP layout, like ros2 bag record: a directory with\n" +
				"metadata.yaml and .mcap files (ros2msg schemas, CDR messages, each topic's offered QoS).\n" +
				"Topics are subscribed as they appear, with the QoS every publisher offers (reliable and\n" +
				"transient local only if all publishers are); Ctrl-C ends the recording.\n\n" +
				"  TOPIC ..., --topics TOPIC ... topics to record\n" +
				"  --services SERVICE ...        services to record: their introspection events, topic\n" +
				"                                SERVICE/_service_event (type pkg/srv/X_Event), as ros2 bag record\n" +
				"                                (Jazzy) records them; the service or client must publish them\n" +
				"  -a, --all                     record every topic and every service (--all-topics --all-services)\n" +
				"  --all-topics                  record every topic (hidden ones too with --include-hidden-topics)\n" +
				"  --all-services                record every service whose introspection events are published\n" +
				"  -e, --regex REGEX             record the topics matching REGEX and the services whose name matches\n" +
				"  -x, --exclude, --exclude-regex REGEX   leave out the topics, and the services, matching REGEX\n" +
				"  --exclude-services SERVICE ... leave out these services\n" +
				"  -o, --output DIR              the bag directory (default rosbag2_YYYY_MM_DD-HH_MM_SS; must not exist)\n" +
				"  -b, --max-bag-size BYTES      start a new .mcap file after about BYTES\n" +
				"  -d, --max-bag-duration S      start a new .mcap file every S seconds\n" +
				"  --compression-format F        compress the MCAP chunks: zstd or lz4 (default none)\n" +
				"  --report-period S             log messages, bytes, CPU and memory every S seconds\n\n" +
				"Flight recorder (docs/recording.md):\n" +
				"  --snapshot-duration S         keep only the last S seconds in memory; an event (an e-stop, the\n" +
				"                                autonomy watchdog, ve_body leaving transp for safe, a fault counter\n" +
				"                                rising on /diagnostics) writes that window as a new bag under -o\n" +
				"                                (default flight_recorder), with the event in its metadata\n" +
				"  --snapshot-max-bytes B        memory bound of the window (default 64 MiB)\n" +
				"  --snapshot-keep N             keep at most N snapshot bags (default 20; oldest removed)\n" +
				"  --snapshot-max-disk B         keep at most B bytes of snapshot bags (default 512 MiB)\n" +
				"  --snapshot-holdoff S          least time between two snapshots (default 5)",
			run: (*App).bagRecord,
		},
		"bag play": {
			usage: "bag play BAG [-r RATE] [-l] [--clock [HZ]] [--topics T ...] [--services S ...] [--exclude-services S ...] [-m FROM:=TO ...] [--delay S] [--node-name NAME]",
			help: "Play a bag (rosbag2's MCAP layout) with its recorded timing, like ros2 bag play. Each topic is\n" +
				"published with the QoS its recorded publishers offered.\n\n" +
				"  -r, --rate RATE               speed factor (default 1)\n" +
				"  -l, --loop                    play again and again until Ctrl-C\n" +
				"  --clock [HZ]                  publish /clock with the bag's time at HZ (default 40), for use_sim_time\n" +
				"  --topics T ...                play only these topics (and, as ros2 bag play, every service\n" +
				"                                unless --services is given)\n" +
				"  --services S ...              play only these services' recorded events (S/_service_event)\n" +
				"  --exclude-services S ...      do not play these services' events\n" +
				"  -m, --remap FROM:=TO ...      publish topic FROM as TO\n" +
				"  --delay S                     wait S seconds after creating the publishers (default 0.5), so that\n" +
				"                                subscribers match before the first message\n" +
				"  --node-name [/NS/]NAME        the player's node (default a hidden one): to stand in for the node\n" +
				"                                that published the recording where subscribers trust only it (rsmNode\n" +
				"                                follows rsm/operationMode from robotControlMuxNode only)",
			run: (*App).bagPlay,
		},
		"bag info": {
			usage: "bag info BAG",
			help:  "Print a bag's metadata as ros2 bag info does; a flight-recorder snapshot also shows its trigger.",
			run:   (*App).bagInfo,
		},
	}
}

// multiFlags collects the values of options that take several words
// (--topics a b, -m a:=b c:=d) until the next option, and returns the
// other arguments.
func multiFlags(args []string, names ...string) (rest []string, vals map[string][]string) {
	vals = map[string][]string{}
	isMulti := func(a string) (string, bool) {
		for _, n := range names {
			if a == n {
				return n, true
			}
		}
		return "", false
	}
	for i := 0; i < len(args); i++ {
		n, ok := isMulti(args[i])
		if !ok {
			rest = append(rest, args[i])
			continue
		}
		vals[n] = append(vals[n], []string{}...)
		for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			i++
			vals[n] = append(vals[n], args[i])
		}
	}
	return rest, vals
}

func absTopic(t string) string {
	if !strings.HasPrefix(t, "/") {
		return "/" + t
	}
	return t
}

func positiveSeconds(p *parsed, def string, names ...string) (time.Duration, error) {
	v := p.get(def, names...)
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || f > 1e6 {
		return 0, usagef("%s: %q is not a number of seconds", names[0], v)
	}
	return time.Duration(f * float64(time.Second)), nil
}

func byteCount(p *parsed, def string, names ...string) (int64, error) {
	v := p.get(def, names...)
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, usagef("%s: %q is not a number of bytes", names[0], v)
	}
	return n, nil
}

func (a *App) bagRecord(ctx context.Context, args []string) error {
	args, multi := multiFlags(args, "--topics", "--services", "--exclude-services")
	p, err := parseFlags(args, flagSpec{"-a": false, "--all": false, "--all-topics": false, "--all-services": false, "-e": true, "--regex": true,
		"-x": true, "--exclude": true, "--exclude-regex": true, "-o": true, "--output": true,
		"-b": true, "--max-bag-size": true, "-d": true, "--max-bag-duration": true,
		"--include-hidden-topics": false, "--compression-format": true, "--report-period": true,
		"-s": true, "--storage": true,
		"--snapshot-duration": true, "--snapshot-max-bytes": true, "--snapshot-keep": true,
		"--snapshot-max-disk": true, "--snapshot-holdoff": true})
	if err != nil {
		return err
	}
	if s := p.get("mcap", "-s", "--storage"); s != "mcap" {
		return usagef("storage %q is not supported: fsmnodes records mcap only", s)
	}
	ro, err := a.recordSelection(p, multi)
	if err != nil {
		return err
	}
	wo, err := writerOptions(p)
	if err != nil {
		return err
	}
	report, err := positiveSeconds(p, "0", "--report-period")
	if err != nil {
		return err
	}
	window, err := positiveSeconds(p, "0", "--snapshot-duration")
	if err != nil {
		return err
	}
	var so bag.SnapshotOptions
	if window > 0 {
		if so, err = snapshotOptions(p, window); err != nil {
			return err
		}
	}
	s, err := a.open(ctx, "bag_record")
	if err != nil {
		return err
	}
	defer s.close()
	wo.ROSDistro = s.rc.Distro().String()
	if (len(ro.Services) > 0 || p.has("--all-services")) && s.rc.Distro() == ros.Humble {
		fmt.Fprintln(a.Stderr, "[WARN] [bag_record]: ROS 2 Humble has no service introspection: no service publishes events to record")
	}
	if window > 0 {
		so.Writer = wo
		return a.runFlightRecorder(ctx, s, ro, so, report)
	}
	dir := p.get("", "-o", "--output")
	if dir == "" {
		dir = "rosbag2_" + time.Now().Format("2006_01_02-15_04_05")
	}
	return a.runRecorder(ctx, s, ro, wo, dir, report)
}

// recordSelection reads what bag record records: topics, services, -a and
// the regular expressions.
func (a *App) recordSelection(p *parsed, multi map[string][]string) (bag.RecordOptions, error) {
	ro := bag.RecordOptions{Registry: a.Registry, All: p.has("-a", "--all", "--all-topics"),
		AllServices: p.has("-a", "--all", "--all-services"), IncludeHidden: p.has("--include-hidden-topics")}
	for _, t := range append(p.pos, multi["--topics"]...) {
		ro.Topics = append(ro.Topics, absTopic(t))
	}
	for _, sv := range multi["--services"] {
		ro.Services = append(ro.Services, bag.ServiceEventTopic(absTopic(sv)))
	}
	for _, sv := range multi["--exclude-services"] {
		ro.ExcludeServices = append(ro.ExcludeServices, bag.ServiceEventTopic(absTopic(sv)))
	}
	var err error
	if v := p.get("", "-e", "--regex"); v != "" {
		if ro.Regex, err = regexp.Compile(v); err != nil {
			return ro, usagef("--regex: %v", err)
		}
	}
	if v := p.get("", "-x", "--exclude", "--exclude-regex"); v != "" {
		if ro.Exclude, err = regexp.Compile(v); err != nil {
			return ro, usagef("--exclude: %v", err)
		}
	}
	if !ro.All && !ro.AllServices && ro.Regex == nil && len(ro.Topics) == 0 && len(ro.Services) == 0 {
		return ro, usagef("bag record: give topics, --services, -a, --all-topics, --all-services or -e")
	}
	return ro, nil
}

// writerOptions reads how the bag's files are written: compression and
// splitting.
func writerOptions(p *parsed) (bag.WriterOptions, error) {
	wo := bag.WriterOptions{Compression: p.get("", "--compression-format")}
	if wo.Compression == "none" {
		wo.Compression = ""
	}
	var err error
	if wo.MaxFileBytes, err = byteCount(p, "0", "-b", "--max-bag-size"); err != nil {
		return wo, err
	}
	if wo.MaxFileDuration, err = positiveSeconds(p, "0", "-d", "--max-bag-duration"); err != nil {
		return wo, err
	}
	return wo, nil
}

// snapshotOptions reads the flight recorder's flags (--snapshot-*); the
// writer options are set by the caller.
func snapshotOptions(p *parsed, window time.Duration) (bag.SnapshotOptions, error) {
	so := bag.SnapshotOptions{Dir: p.get("flight_recorder", "-o", "--output"), Window: window}
	var err error
	if so.MaxBytes, err = byteCount(p, "0", "--snapshot-max-bytes"); err != nil {
		return so, err
	}
	keep, err := byteCount(p, "0", "--snapshot-keep")
	if err != nil {
		return so, err
	}
	so.KeepBags = int(keep)
	if so.MaxDiskBytes, err = byteCount(p, "0", "--snapshot-max-disk"); err != nil {
		return so, err
	}
	if so.Holdoff, err = positiveSeconds(p, "5", "--snapshot-holdoff"); err != nil {
		return so, err
	}
	return so, nil
}

// runFlightRecorder keeps the last window of messages in memory until ctx
// ends, writing a bag on each snapshot request.
func (a *App) runFlightRecorder(ctx context.Context, s *session, ro bag.RecordOptions, so bag.SnapshotOptions, report time.Duration) error {
	so.Logf = func(f string, args ...any) { fmt.Fprintf(a.Stderr, "[INFO] [bag_record]: "+f+"\n", args...) }
	fr, err := bag.NewFlightRecorder(s.node, ro, so)
	if err != nil {
		return err
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fmt.Fprintf(a.Stderr, "[INFO] [bag_record]: Flight recorder: keeping the last %v; snapshots go to %s\n", so.Window, so.Dir)
	if report > 0 {
		go a.reportLoop(rctx, report, fr.Recorder, func() string {
			st := fr.Snap.Stats()
			return fmt.Sprintf(", ring %d messages %.1f MiB, %d snapshots", st.Messages, float64(st.Bytes)/(1<<20), len(st.Written))
		})
	}
	err = fr.Run(rctx)
	fr.Snap.Wait()
	st := fr.Snap.Stats()
	fmt.Fprintf(a.Stderr, "[INFO] [bag_record]: Flight recorder stopped: %d messages seen, %d snapshots written, %d events within the holdoff\n",
		fr.Messages(), len(st.Written), st.Skipped)
	return err
}

// runRecorder records into a new bag in dir until ctx ends.
func (a *App) runRecorder(ctx context.Context, s *session, ro bag.RecordOptions, wo bag.WriterOptions, dir string, report time.Duration) error {
	w, err := bag.Create(dir, wo)
	if err != nil {
		return err
	}
	rec, err := bag.NewRecorder(s.node, w, ro, nil)
	if err != nil {
		w.Close()
		return err
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if report > 0 {
		go a.reportLoop(rctx, report, rec, func() string { return "" })
	}
	fmt.Fprintf(a.Stderr, "[INFO] [bag_record]: Recording to '%s'\n", dir)
	runErr := rec.Run(rctx)
	// Stop the subscriptions before closing the writer.
	s.close()
	closeErr := w.Close()
	m := w.Metadata()
	fmt.Fprintf(a.Stderr, "[INFO] [bag_record]: Recorded %d messages on %d topics to '%s'\n", m.MessageCount, len(m.Topics), dir)
	if n := rec.Errors(); n > 0 {
		fmt.Fprintf(a.Stderr, "[ERROR] [bag_record]: %d messages could not be written\n", n)
	}
	if runErr != nil {
		return runErr
	}
	return closeErr
}

// reportLoop logs the recorder's figures: messages and their rate, the
// process's CPU time (user + system, as a share of one core) and memory
// (Go heap in use and the resident set).
func (a *App) reportLoop(ctx context.Context, period time.Duration, rec *bag.Recorder, extra func() string) {
	t := time.NewTicker(period)
	defer t.Stop()
	lastMsgs, lastCPU, lastT := rec.Messages(), cpuTime(), time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		msgs, cpu, now := rec.Messages(), cpuTime(), time.Now()
		dt := now.Sub(lastT).Seconds()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Fprintf(a.Stderr, "[INFO] [bag_record]: %d messages (%.0f/s) on %d topics, CPU %.1f %% of a core, heap %.1f MiB, RSS %.1f MiB%s\n",
			msgs, float64(msgs-lastMsgs)/dt, len(rec.Topics()), 100*(cpu-lastCPU).Seconds()/dt,
			float64(ms.HeapInuse)/(1<<20), float64(rssBytes())/(1<<20), extra())
		lastMsgs, lastCPU, lastT = msgs, cpu, now
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rssBytes reads the resident set size from /proc/self/statm (0 when
// unavailable).
func rssBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

func (a *App) bagPlay(ctx context.Context, args []string) error {
	args, multi := multiFlags(args, "--topics", "--services", "--exclude-services", "-m", "--remap")
	// --clock takes an optional frequency: "--clock" alone or "--clock 100".
	clockHz := 0.0
	var rest []string
	for i := 0; i < len(args); i++ {
		v, ok := strings.CutPrefix(args[i], "--clock")
		if !ok || (v != "" && !strings.HasPrefix(v, "=")) {
			rest = append(rest, args[i])
			continue
		}
		clockHz = 40
		val := strings.TrimPrefix(v, "=")
		if val == "" && i+1 < len(args) {
			if _, err := strconv.ParseFloat(args[i+1], 64); err == nil {
				i++
				val = args[i]
			}
		}
		if val != "" {
			f, err := strconv.ParseFloat(val, 64)
			if err != nil || f <= 0 || f > 10000 {
				return usagef("--clock: %q is not a frequency in Hz", val)
			}
			clockHz = f
		}
	}
	p, err := parseFlags(rest, flagSpec{"-r": true, "--rate": true, "-l": false, "--loop": false, "--delay": true,
		"-s": true, "--storage": true, "--node-name": true})
	if err != nil {
		return err
	}
	if len(p.pos) != 1 {
		return usagef("bag play: give one bag directory")
	}
	rate, err := strconv.ParseFloat(p.get("1", "-r", "--rate"), 64)
	if err != nil || rate <= 0 || rate > 1000 {
		return usagef("--rate: %q is not a positive factor", p.get("1", "-r", "--rate"))
	}
	delay, err := positiveSeconds(p, "0.5", "--delay")
	if err != nil {
		return err
	}
	b, err := bag.Open(p.pos[0])
	if err != nil {
		return err
	}
	po := bag.PlayOptions{Registry: a.Registry, Rate: rate, Loop: p.has("-l", "--loop"), ClockHz: clockHz, Delay: delay, Remap: map[string]string{}}
	for _, t := range multi["--topics"] {
		po.Topics = append(po.Topics, absTopic(t))
	}
	for _, sv := range multi["--services"] {
		po.Services = append(po.Services, bag.ServiceEventTopic(absTopic(sv)))
	}
	for _, sv := range multi["--exclude-services"] {
		po.ExcludeServices = append(po.ExcludeServices, bag.ServiceEventTopic(absTopic(sv)))
	}
	for _, r := range append(multi["-m"], multi["--remap"]...) {
		from, to, ok := strings.Cut(r, ":=")
		if !ok || from == "" || to == "" {
			return usagef("--remap: %q is not FROM:=TO", r)
		}
		po.Remap[absTopic(from)] = absTopic(to)
	}
	var s *session
	if nn := p.get("", "--node-name"); nn != "" {
		ns, name := "/", nn
		if i := strings.LastIndex(nn, "/"); i >= 0 {
			ns, name = nn[:i], nn[i+1:]
			if ns == "" {
				ns = "/"
			}
		}
		s, err = a.openNodeNS(ctx, name, ns)
	} else {
		s, err = a.open(ctx, "bag_play")
	}
	if err != nil {
		return err
	}
	defer s.close()
	fmt.Fprintf(a.Stderr, "[INFO] [bag_play]: Playing %s: %d messages over %ss\n", p.pos[0], b.Metadata.MessageCount, fmt.Sprintf("%.3f", b.Metadata.Duration.Seconds()))
	st, err := bag.Play(ctx, s.node, b, po)
	fmt.Fprintf(a.Stderr, "[INFO] [bag_play]: Published %d messages\n", st.Published)
	return err
}

func (a *App) bagInfo(_ context.Context, args []string) error {
	p, err := parseFlags(args, flagSpec{"-s": true, "--storage": true})
	if err != nil {
		return err
	}
	if len(p.pos) != 1 {
		return usagef("bag info: give one bag directory")
	}
	b, err := bag.Open(p.pos[0])
	if err != nil {
		return err
	}
	fmt.Fprint(a.Stdout, bag.FormatInfo(b, time.Local))
	if ev, ok := bag.EventOf(b.Metadata); ok {
		fmt.Fprintf(a.Stdout, "Trigger:           %s at %s\n", ev, ev.Time.In(time.Local).Format("Jan _2 2006 15:04:05.000000000"))
	}
	return nil
}
