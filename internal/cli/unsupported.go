package cli

import (
	"context"
	"fmt"
)

// notYet returns a verb that reports it is not supported by this build.
func notYet(usage, why string) verb {
	return verb{
		usage: usage,
		help:  "Not yet supported: " + why,
		run: func(_ *App, _ context.Context, _ []string) error {
			return fmt.Errorf("%s: %w (%s)", usage, errUnsupported, why)
		},
	}
}

func paramVerbs() map[string]verb {
	why := "the parameter client is not wired yet"
	return map[string]verb{
		"param list":     notYet("param list [NODE]", why),
		"param get":      notYet("param get NODE NAME", why),
		"param set":      notYet("param set NODE NAME VALUE", why),
		"param describe": notYet("param describe NODE NAME", why),
		"param dump":     notYet("param dump NODE", why),
	}
}

func actionVerbs() map[string]verb {
	why := "the action client is not wired yet"
	return map[string]verb{
		"action list":      notYet("action list [-t]", why),
		"action info":      notYet("action info ACTION", why),
		"action send_goal": notYet("action send_goal ACTION TYPE GOAL [--feedback]", why),
	}
}
