package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/sros2"
)

// securityVerbs are the verbs of `ros2 security` that make and read SROS2
// keystores (docs/security.md#sros2).
func securityVerbs() map[string]verb {
	return map[string]verb{
		"security create_keystore": {
			usage: "security create_keystore ROOT",
			help: "Create a keystore as 'ros2 security create_keystore': a CA (identity and permissions) and the\n" +
				"governance for ROS_DOMAIN_ID (default 0), signed.",
			run: (*App).securityCreateKeystore,
		},
		"security create_enclave": {
			usage: "security create_enclave ROOT NAME",
			help: "Create an enclave (e.g. /robot/base) in the keystore ROOT as 'ros2 security create_enclave': a key,\n" +
				"a certificate CN=NAME signed by the identity CA, and permissions that allow everything on\n" +
				"ROS_DOMAIN_ID, signed. Restrict them with create_permission.",
			run: (*App).securityCreateEnclave,
		},
		"security create_permission": {
			usage: "security create_permission ROOT NAME POLICY_FILE_PATH",
			help: "Write the permissions of enclave NAME from its entry in a policy XML (sros2's format) for\n" +
				"ROS_DOMAIN_ID and sign them, as 'ros2 security create_permission'.",
			run: (*App).securityCreatePermission,
		},
		"security generate_policy": {
			usage: "security generate_policy POLICY_FILE_PATH [--spin-time S]",
			help: "Write a policy XML that allows what the running graph's nodes do (their publishers,\n" +
				"subscriptions, services and clients, under each node's enclave), as 'ros2 security\n" +
				"generate_policy'; an existing file is extended.",
			run: (*App).securityGeneratePolicy,
		},
		"security demo_keystore": {
			usage: "security demo_keystore ENCLAVE...",
			help: "(Not in ros2 security: for launch files.) Make sure the keystore\n" +
				"$ROS_HOME/fsmnodes_keystore/domain_<ROS_DOMAIN_ID> ($ROS_HOME defaults to ~/.ros) exists with\n" +
				"these enclaves (each created as create_enclave does, unless it has its key already), and print\n" +
				"its path without a newline, for $(command ...) in a launch file (the demo's security:=true).",
			run: (*App).securityDemoKeystore,
		},
		"security list_enclaves": {
			usage: "security list_enclaves ROOT",
			help:  "List the enclaves of a keystore, as 'ros2 security list_enclaves'.",
			run:   (*App).securityListEnclaves,
		},
	}
}

// keystore is the keystore at root with the domain id of the environment.
func (a *App) keystore(root string) (*sros2.Keystore, error) {
	domain, err := sros2.DomainIDFromEnv(func(k string) string { v, _ := a.lookupEnv(k); return v })
	if err != nil {
		return nil, err
	}
	return &sros2.Keystore{Root: root, DomainID: domain}, nil
}

func (a *App) securityPositional(args []string, n int, usage string) ([]string, error) {
	p, err := parseFlags(args, flagSpec{})
	if err != nil {
		return nil, err
	}
	if len(p.pos) != n {
		return nil, usagef("usage: fsmnodes %s", usage)
	}
	return p.pos, nil
}

func (a *App) securityCreateKeystore(_ context.Context, args []string) error {
	pos, err := a.securityPositional(args, 1, "security create_keystore ROOT")
	if err != nil {
		return err
	}
	k, err := a.keystore(pos[0])
	if err != nil {
		return err
	}
	return k.Create()
}

func (a *App) securityCreateEnclave(_ context.Context, args []string) error {
	pos, err := a.securityPositional(args, 2, "security create_enclave ROOT NAME")
	if err != nil {
		return err
	}
	k, err := a.keystore(pos[0])
	if err != nil {
		return err
	}
	return k.CreateEnclave(pos[1])
}

func (a *App) securityCreatePermission(_ context.Context, args []string) error {
	pos, err := a.securityPositional(args, 3, "security create_permission ROOT NAME POLICY_FILE_PATH")
	if err != nil {
		return err
	}
	k, err := a.keystore(pos[0])
	if err != nil {
		return err
	}
	b, err := os.ReadFile(pos[2])
	if err != nil {
		return fmt.Errorf("policy: %w", err)
	}
	policy, err := sros2.ParsePolicy(b)
	if err != nil {
		return fmt.Errorf("%s: %w", pos[2], err)
	}
	return k.CreatePermission(pos[1], policy)
}

func (a *App) securityListEnclaves(_ context.Context, args []string) error {
	pos, err := a.securityPositional(args, 1, "security list_enclaves ROOT")
	if err != nil {
		return err
	}
	k, err := a.keystore(pos[0])
	if err != nil {
		return err
	}
	list, err := k.Enclaves()
	if err != nil {
		return err
	}
	for _, e := range list {
		fmt.Fprintln(a.Stdout, e)
	}
	return nil
}

func (a *App) securityGeneratePolicy(ctx context.Context, args []string) error {
	s, p, err := a.graphSession(ctx, args, flagSpec{}, 1, "security generate_policy POLICY_FILE_PATH")
	if err != nil {
		return err
	}
	defer s.close()
	path := p.pos[0]
	policy := &sros2.Policy{Version: sros2.PolicyVersion}
	if b, err := os.ReadFile(path); err == nil {
		if policy, err = sros2.ParsePolicy(b); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	// Secure participants need an authentication handshake before their
	// nodes show: with none seen yet, wait for them up to the spin time.
	st, _ := spinTime(p)
	deadline := time.Now().Add(st)
	nodes := 0
	for {
		for _, part := range s.rc.Participants() {
			if part.Self {
				continue
			}
			for _, n := range part.Nodes {
				if n.Name == "" || strings.HasPrefix(n.Name, "_") {
					continue
				}
				nodes++
				if err := addNodeToPolicy(s.rc, policy, part.Enclave, n); err != nil {
					return err
				}
			}
		}
		rest := time.Until(deadline)
		if nodes > 0 || rest <= 0 {
			break
		}
		s.settle(ctx, rest)
	}
	if nodes == 0 {
		fmt.Fprintln(a.Stderr, "No nodes detected in the ROS graph. No policy file was generated.")
		return &exitStatus{code: 1}
	}
	out, err := policy.Marshal()
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o644)
}

// addNodeToPolicy adds what node n does in the graph to its profile in the
// policy's enclave, as sros2's generate_policy words it: names under the
// node are private (~x), under its namespace relative, others absolute.
func addNodeToPolicy(rc *ros.Context, policy *sros2.Policy, enclave string, n ros.NodeName) error {
	if enclave == "" {
		enclave = "/"
	}
	e, ok := policy.Enclave(enclave)
	if !ok {
		policy.Enclaves = append(policy.Enclaves, sros2.PolicyEnclave{Path: enclave})
		e = &policy.Enclaves[len(policy.Enclaves)-1]
	}
	var prof *sros2.PolicyProfile
	for i := range e.Profiles {
		if e.Profiles[i].NS == n.Namespace && e.Profiles[i].Node == n.Name {
			prof = &e.Profiles[i]
		}
	}
	if prof == nil {
		e.Profiles = append(e.Profiles, sros2.PolicyProfile{NS: n.Namespace, Node: n.Name})
		prof = &e.Profiles[len(e.Profiles)-1]
	}
	fqn := n.FullyQualifiedName()
	relative := func(list []ros.NameAndTypes) []string {
		var out []string
		for _, nt := range list {
			switch {
			case strings.HasPrefix(nt.Name, fqn+"/"):
				out = append(out, "~"+strings.TrimPrefix(nt.Name, fqn))
			case strings.HasPrefix(nt.Name, n.Namespace+"/") && n.Namespace != "/":
				out = append(out, strings.TrimPrefix(nt.Name, n.Namespace+"/"))
			case n.Namespace == "/" && strings.Count(nt.Name, "/") == 1:
				out = append(out, strings.TrimPrefix(nt.Name, "/"))
			default:
				out = append(out, nt.Name)
			}
		}
		return out
	}
	subs, err := rc.SubscriberNamesAndTypesByNode(n.Name, n.Namespace)
	if err != nil {
		return err
	}
	pubs, err := rc.PublisherNamesAndTypesByNode(n.Name, n.Namespace)
	if err != nil {
		return err
	}
	srvs, err := rc.ServiceNamesAndTypesByNode(n.Name, n.Namespace)
	if err != nil {
		return err
	}
	clients, err := rc.ClientNamesAndTypesByNode(n.Name, n.Namespace)
	if err != nil {
		return err
	}
	if names := relative(subs); len(names) > 0 {
		prof.Topics = append(prof.Topics, sros2.TopicRule{Subscribe: sros2.Allow, Names: names})
	}
	if names := relative(pubs); len(names) > 0 {
		prof.Topics = append(prof.Topics, sros2.TopicRule{Publish: sros2.Allow, Names: names})
	}
	if names := relative(srvs); len(names) > 0 {
		prof.Services = append(prof.Services, sros2.ServiceRule{Reply: sros2.Allow, Names: names})
	}
	if names := relative(clients); len(names) > 0 {
		prof.Services = append(prof.Services, sros2.ServiceRule{Request: sros2.Allow, Names: names})
	}
	return nil
}

// DemoKeystoreDir is where `security demo_keystore` keeps the keystore of
// a domain: under $ROS_HOME (default ~/.ros), one per domain id, since the
// governance and permissions name the domain.
func DemoKeystoreDir(getenv func(string) string, domain uint32) (string, error) {
	home := getenv("ROS_HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no ROS_HOME and no home directory: %w", err)
		}
		home = filepath.Join(h, ".ros")
	}
	return filepath.Join(home, "fsmnodes_keystore", fmt.Sprintf("domain_%d", domain)), nil
}

func (a *App) securityDemoKeystore(_ context.Context, args []string) error {
	p, err := parseFlags(args, flagSpec{})
	if err != nil {
		return err
	}
	if len(p.pos) == 0 {
		return usagef("usage: fsmnodes security demo_keystore ENCLAVE...")
	}
	getenv := func(k string) string { v, _ := a.lookupEnv(k); return v }
	domain, err := sros2.DomainIDFromEnv(getenv)
	if err != nil {
		return err
	}
	root, err := DemoKeystoreDir(getenv, domain)
	if err != nil {
		return err
	}
	k := &sros2.Keystore{Root: root, DomainID: domain}
	if !k.Valid() {
		if err := k.Create(); err != nil {
			return err
		}
	}
	for _, e := range p.pos {
		if _, err := os.Stat(filepath.Join(k.EnclaveDir(e), "key.pem")); err == nil {
			continue
		}
		if err := k.CreateEnclave(e); err != nil {
			return err
		}
	}
	fmt.Fprint(a.Stdout, root)
	return nil
}
