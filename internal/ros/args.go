package ros

import (
	"fmt"
	"strings"

	"github.com/fsmnodes/fsmnodes/internal/ros/param"
)

// ParamOverride is one "-p [node:]name:=value" argument. The value is kept
// as the raw YAML text; parameter support parses it.
type ParamOverride struct {
	// Node limits the override to nodes with this name ("" = all nodes).
	Node  string
	Name  string
	Value string
	// FilesBefore is how many --params-file arguments came before this one
	// on the command line: rcl merges files and rules in command-line
	// order (see param.Overrides).
	FilesBefore int
}

// LogLevel is an rcutils severity.
type LogLevel int

// rcutils severities.
const (
	LogUnset LogLevel = 0
	LogDebug LogLevel = 10
	LogInfo  LogLevel = 20
	LogWarn  LogLevel = 30
	LogError LogLevel = 40
	LogFatal LogLevel = 50
)

// String returns the lower-case level name.
func (l LogLevel) String() string {
	switch l {
	case LogUnset:
		return "unset"
	case LogDebug:
		return "debug"
	case LogInfo:
		return "info"
	case LogWarn:
		return "warn"
	case LogError:
		return "error"
	case LogFatal:
		return "fatal"
	}
	return fmt.Sprintf("LogLevel(%d)", int(l))
}

// ParseLogLevel parses a severity name case-insensitively ("debug", "info",
// "warn", "error", "fatal", "unset").
func ParseLogLevel(s string) (LogLevel, error) {
	switch strings.ToLower(s) {
	case "unset":
		return LogUnset, nil
	case "debug":
		return LogDebug, nil
	case "info":
		return LogInfo, nil
	case "warn", "warning":
		return LogWarn, nil
	case "error":
		return LogError, nil
	case "fatal":
		return LogFatal, nil
	}
	return 0, fmt.Errorf("unknown log level %q (want debug, info, warn, error, fatal or unset)", s)
}

// Args is the parsed command line of a process: the ROS arguments of all
// --ros-args blocks and the remaining user arguments.
//
// Parameter sources are merged in command-line order, files and -p rules
// interleaved (ParamOverride.FilesBefore), as rcl does; param.Overrides
// says which wins.
type Args struct {
	// Remaps in command-line order; the first matching rule wins.
	Remaps []RemapRule
	// Params are the -p/--param overrides in order.
	Params []ParamOverride
	// ParamsFiles are the --params-file paths in order.
	ParamsFiles []string
	// LogLevel is the default level from "--log-level LEVEL" (LogUnset if
	// not given).
	LogLevel LogLevel
	// LoggerLevels are the per-logger levels from "--log-level name:=LEVEL"
	// (last occurrence wins).
	LoggerLevels map[string]LogLevel
	// RosoutLogs, StdoutLogs and ExternalLibLogs are the
	// --enable-/--disable- toggles; nil means "not given" (default on for
	// rosout and stdout).
	RosoutLogs, StdoutLogs, ExternalLibLogs *bool
	// Enclave from -e/--enclave ("" if not given).
	Enclave string
	// LogConfigFile from --log-config-file, LogFileName from --log-file-name.
	LogConfigFile, LogFileName string
	// User holds the non-ROS arguments in order (program arguments before
	// --ros-args and after "--").
	User []string
}

// ArgsError reports a malformed or unknown ROS argument.
type ArgsError struct {
	Arg    string
	Reason string
}

// Error formats the argument and the reason.
func (e *ArgsError) Error() string {
	return fmt.Sprintf("--ros-args: %q: %s", e.Arg, e.Reason)
}

// ParseArgs parses a command line (without the program name):
// "[user args] --ros-args [ros args] [-- [user args]] [--ros-args ...]".
// Unknown ROS arguments are an error.
func ParseArgs(args []string) (*Args, error) {
	a := &Args{}
	inROS := false
	flagArg := func(i int) (string, error) {
		if i+1 >= len(args) || args[i+1] == "--" || args[i+1] == "--ros-args" {
			return "", &ArgsError{Arg: args[i], Reason: "missing value"}
		}
		return args[i+1], nil
	}
	setBool := func(p **bool, v bool) {
		*p = &v
	}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--ros-args" {
			inROS = true
			continue
		}
		if !inROS {
			a.User = append(a.User, arg)
			continue
		}
		switch arg {
		case "--":
			inROS = false
		case "-r", "--remap":
			v, err := flagArg(i)
			if err != nil {
				return nil, err
			}
			i++
			r, err := ParseRemapRule(v)
			if err != nil {
				return nil, &ArgsError{Arg: v, Reason: err.Error()}
			}
			a.Remaps = append(a.Remaps, r)
		case "-p", "--param":
			v, err := flagArg(i)
			if err != nil {
				return nil, err
			}
			i++
			p, err := parseParamOverride(v)
			if err != nil {
				return nil, err
			}
			p.FilesBefore = len(a.ParamsFiles)
			a.Params = append(a.Params, p)
		case "--params-file":
			v, err := flagArg(i)
			if err != nil {
				return nil, err
			}
			i++
			a.ParamsFiles = append(a.ParamsFiles, v)
		case "--log-level":
			v, err := flagArg(i)
			if err != nil {
				return nil, err
			}
			i++
			if err := a.parseLogLevel(v); err != nil {
				return nil, err
			}
		case "-e", "--enclave":
			v, err := flagArg(i)
			if err != nil {
				return nil, err
			}
			i++
			if err := ValidateNamespace(v); err != nil {
				return nil, &ArgsError{Arg: v, Reason: "enclave: " + err.Error()}
			}
			a.Enclave = v
		case "--log-config-file":
			v, err := flagArg(i)
			if err != nil {
				return nil, err
			}
			i++
			a.LogConfigFile = v
		case "--log-file-name":
			v, err := flagArg(i)
			if err != nil {
				return nil, err
			}
			i++
			a.LogFileName = v
		case "--enable-rosout-logs":
			setBool(&a.RosoutLogs, true)
		case "--disable-rosout-logs":
			setBool(&a.RosoutLogs, false)
		case "--enable-stdout-logs":
			setBool(&a.StdoutLogs, true)
		case "--disable-stdout-logs":
			setBool(&a.StdoutLogs, false)
		case "--enable-external-lib-logs":
			setBool(&a.ExternalLibLogs, true)
		case "--disable-external-lib-logs":
			setBool(&a.ExternalLibLogs, false)
		default:
			return nil, &ArgsError{Arg: arg, Reason: "unknown ROS argument (known: -r/--remap, -p/--param, --params-file, --log-level, -e/--enclave, --log-config-file, --log-file-name, --enable-/--disable-{rosout,stdout,external-lib}-logs)"}
		}
	}
	return a, nil
}

func parseParamOverride(s string) (ParamOverride, error) {
	var p ParamOverride
	sep := strings.Index(s, ":=")
	if sep < 0 {
		return p, &ArgsError{Arg: s, Reason: "parameter override must be name:=value"}
	}
	name, value := s[:sep], s[sep+2:]
	if i := strings.IndexByte(name, ':'); i >= 0 {
		p.Node, name = name[:i], name[i+1:]
		if err := ValidateNodeName(p.Node); err != nil {
			return p, &ArgsError{Arg: s, Reason: "node prefix: " + err.Error()}
		}
	}
	if name == "" {
		return p, &ArgsError{Arg: s, Reason: "empty parameter name"}
	}
	if value == "" {
		return p, &ArgsError{Arg: s, Reason: "empty parameter value"}
	}
	p.Name, p.Value = name, value
	return p, nil
}

func (a *Args) parseLogLevel(s string) error {
	if sep := strings.Index(s, ":="); sep >= 0 {
		name := s[:sep]
		if name == "" {
			return &ArgsError{Arg: s, Reason: "empty logger name"}
		}
		l, err := ParseLogLevel(s[sep+2:])
		if err != nil {
			return &ArgsError{Arg: s, Reason: err.Error()}
		}
		if a.LoggerLevels == nil {
			a.LoggerLevels = map[string]LogLevel{}
		}
		a.LoggerLevels[name] = l
		return nil
	}
	l, err := ParseLogLevel(s)
	if err != nil {
		return &ArgsError{Arg: s, Reason: err.Error()}
	}
	a.LogLevel = l
	return nil
}

// ParamsFor returns the -p overrides that apply to the node with the given
// name, in order.
func (a *Args) ParamsFor(nodeName string) []ParamOverride {
	var out []ParamOverride
	for _, p := range a.Params {
		if p.Node == "" || p.Node == nodeName {
			out = append(out, p)
		}
	}
	return out
}

// LevelFor returns the configured level of a logger: its own
// --log-level name:=LEVEL, else the default --log-level, else LogInfo.
func (a *Args) LevelFor(loggerName string) LogLevel {
	if l, ok := a.LoggerLevels[loggerName]; ok {
		return l
	}
	if a.LogLevel != LogUnset {
		return a.LogLevel
	}
	return LogInfo
}

// overrides reads the parameter files and -p rules in command-line order.
func (a *Args) overrides() (*param.Overrides, error) {
	var ov param.Overrides
	files := 0
	addFiles := func(upTo int) error {
		for ; files < upTo && files < len(a.ParamsFiles); files++ {
			if err := ov.AddFile(a.ParamsFiles[files]); err != nil {
				return err
			}
		}
		return nil
	}
	for _, p := range a.Params {
		if err := addFiles(p.FilesBefore); err != nil {
			return nil, err
		}
		if err := ov.AddParam(p.Node, p.Name, p.Value); err != nil {
			return nil, err
		}
	}
	if err := addFiles(len(a.ParamsFiles)); err != nil {
		return nil, err
	}
	return &ov, nil
}
