package claude

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pickup-dev/pickup/internal/fsx"
)

// Claude Code's .claude/settings.json: adding and removing pickup's hooks
// while keeping everything else in the file as it was.

// settingsPlan is the change to settings.json, computed before anything
// is written.
type settingsPlan struct {
	path    string // the file to write
	old     []byte // its content when planned
	existed bool   // whether it existed then
	data    []byte // new content; nil with remove
	remove  bool
	write   bool
	perm    fs.FileMode
	change  Change
}

func (p settingsPlan) apply(sync bool) error {
	if p.remove || p.write {
		// Someone (Claude Code itself, /config) may have saved the file
		// since it was read: never overwrite that.
		now, err := fsx.ReadRegular(p.path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if (err == nil) != p.existed || !bytes.Equal(now, p.old) {
			return fmt.Errorf("%s changed while pickup was merging it; run again (it was left as it is)", p.path)
		}
	}
	switch {
	case p.remove:
		if err := os.Remove(p.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	case p.write:
		if err := os.MkdirAll(filepath.Dir(p.path), 0o755); err != nil {
			return err
		}
		if err := fsx.WriteReplace(p.path, p.data, p.perm, sync); err != nil {
			return fmt.Errorf("write %s: %w", p.path, err)
		}
	}
	return nil
}

// planSettings reads settings.json and computes its new content.
func planSettings(settings string, uninstall bool) (settingsPlan, error) {
	// A link in settings.json's place was refused (CheckPaths), and
	// is never read through.
	plan := settingsPlan{path: settings, perm: 0o644, change: Change{Path: settings, Action: "unchanged"}}
	data, err := fsx.ReadRegular(plan.path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return plan, err
	}
	if !exists && uninstall {
		plan.change = Change{}
		return plan, nil
	}
	plan.old, plan.existed = data, exists
	if info, err := os.Lstat(plan.path); err == nil {
		plan.perm = info.Mode().Perm()
	}
	root := &ojValue{kind: '{'}
	if exists && len(bytes.TrimSpace(data)) > 0 {
		root, err = parseOJ(data)
		if err != nil {
			return plan, fmt.Errorf("%s: %w; fix or remove it and run again (nothing was changed)", settings, err)
		}
		if root.kind != '{' {
			return plan, fmt.Errorf("%s: the settings must be a JSON object; fix it and run again (nothing was changed)", settings)
		}
	}
	var changed bool
	if uninstall {
		changed = removeHooks(root)
	} else {
		changed, err = addHooks(root)
		if err != nil {
			return plan, fmt.Errorf("%s: %w; fix it and run again (nothing was changed)", settings, err)
		}
	}
	if !changed {
		return plan, nil
	}
	var events []string
	for _, h := range projectHooks {
		events = append(events, h.event)
	}
	switch {
	case uninstall && len(root.members) == 0:
		plan.remove = true
		plan.change = Change{Path: settings, Action: "removed", Detail: "it held only pickup's hooks"}
	case uninstall:
		plan.write = true
		plan.change = Change{Path: settings, Action: "updated", Detail: "removed pickup's hooks, kept everything else"}
	case !exists:
		plan.write = true
		plan.change = Change{Path: settings, Action: "created", Detail: "hooks " + strings.Join(events, ", ") + " run `pickup hook ...`"}
	default:
		plan.write = true
		plan.change = Change{Path: settings, Action: "updated", Detail: "added pickup's hooks (" + strings.Join(events, ", ") + "), kept everything else"}
	}
	if plan.write {
		plan.data = root.encode()
	}
	return plan, nil
}

// addHooks adds pickup's hook groups that root lacks. A hook whose
// command is exactly pickup's counts as installed wherever it is (the user
// may have moved it or changed its matcher); other commands starting with
// "pickup hook " under the same event, from another pickup version, are
// replaced.
func addHooks(root *ojValue) (changed bool, err error) {
	hooks := root.get("hooks")
	if hooks == nil {
		hooks = &ojValue{kind: '{'}
		root.add("hooks", hooks)
		changed = true
	} else if hooks.kind != '{' {
		return false, errors.New(`"hooks" is not an object`)
	}
	for _, h := range projectHooks {
		groups := hooks.get(h.event)
		if groups == nil {
			groups = &ojValue{kind: '['}
			hooks.add(h.event, groups)
			changed = true
		} else if groups.kind != '[' {
			return false, fmt.Errorf(`"hooks.%s" is not an array`, h.event)
		}
		if hasHookCommand(groups, h.command) {
			continue
		}
		removePickupHooks(groups)
		group := &ojValue{kind: '{'}
		if h.matcher != "" {
			group.add("matcher", ojString(h.matcher))
		}
		hook := &ojValue{kind: '{'}
		hook.add("type", ojString("command"))
		hook.add("command", ojString(h.command))
		group.add("hooks", &ojValue{kind: '[', elems: []*ojValue{hook}})
		groups.elems = append(groups.elems, group)
		changed = true
	}
	return changed, nil
}

// removeHooks removes every hook whose command starts with "pickup
// hook ", then the groups, event arrays, "hooks" object that this emptied.
// Anything that was empty before stays.
func removeHooks(root *ojValue) bool {
	hooks := root.get("hooks")
	if hooks == nil || hooks.kind != '{' {
		return false
	}
	changed := false
	kept := hooks.members[:0:0]
	for _, m := range hooks.members {
		if m.val.kind == '[' && removePickupHooks(m.val) > 0 {
			changed = true
			if len(m.val.elems) == 0 {
				continue
			}
		}
		kept = append(kept, m)
	}
	hooks.members = kept
	if changed && len(hooks.members) == 0 {
		root.remove(hooks)
	}
	return changed
}

// removePickupHooks removes pickup's hooks from an event's array of groups,
// and the groups that this left without hooks. It returns how many hooks it
// removed.
func removePickupHooks(groups *ojValue) int {
	n := 0
	kept := groups.elems[:0:0]
	for _, g := range groups.elems {
		list := g.get("hooks")
		if g.kind == '{' && list != nil && list.kind == '[' {
			before := len(list.elems)
			rest := list.elems[:0:0]
			for _, h := range list.elems {
				if cmd, ok := h.getString("command"); ok && strings.HasPrefix(strings.TrimSpace(cmd), hookPrefix) {
					continue
				}
				rest = append(rest, h)
			}
			list.elems = rest
			if removed := before - len(rest); removed > 0 {
				n += removed
				if len(rest) == 0 {
					continue
				}
			}
		}
		kept = append(kept, g)
	}
	groups.elems = kept
	return n
}

func hasHookCommand(groups *ojValue, command string) bool {
	for _, g := range groups.elems {
		if list := g.get("hooks"); list != nil && list.kind == '[' {
			for _, h := range list.elems {
				if cmd, ok := h.getString("command"); ok && strings.TrimSpace(cmd) == command {
					return true
				}
			}
		}
	}
	return false
}
