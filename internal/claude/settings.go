package claude

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pickup-dev/pickup/internal/fsx"
)

// Claude Code's settings files: adding and removing pickup's hooks while
// keeping everything else in the file as it was.

// settingsPlan is the change to a settings file, computed before anything
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

// planSettings reads a settings file and computes its new content: with
// add, pickup's hooks (hooks.json) merged in; without, pickup's hooks
// removed. A file that needs no change plans none; a missing file that
// would only lose hooks plans nothing at all (an empty Change).
func planSettings(settings string, tmpl *ojValue, add bool) (settingsPlan, error) {
	// A link in the file's place was refused (CheckPaths), and is never
	// read through.
	plan := settingsPlan{path: settings, perm: 0o644, change: Change{Path: settings, Action: "unchanged"}}
	data, err := fsx.ReadRegular(plan.path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return plan, err
	}
	if !exists && !add {
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
	if add {
		changed, err = addHooks(root, tmpl)
		if err != nil {
			return plan, fmt.Errorf("%s: %w; fix it and run again (nothing was changed)", settings, err)
		}
	} else {
		changed = removeHooks(root)
	}
	if !changed {
		return plan, nil
	}
	var events []string
	for _, m := range tmpl.members {
		events = append(events, m.key)
	}
	switch {
	case !add && len(root.members) == 0:
		plan.remove = true
		plan.change = Change{Path: settings, Action: "removed", Detail: "it held only pickup's hooks"}
	case !add:
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

// isPickupHook reports whether a hook entry is pickup's, of this version or
// another: its command runs `pickup hook ...`.
func isPickupHook(h *ojValue) bool {
	cmd, ok := h.getString("command")
	return ok && strings.Contains(cmd, hookPrefix)
}

// addHooks makes root's hooks hold exactly the entries of tmpl (pickup's
// hooks for the agent: the plugin's hooks.json for Claude Code):
// pickup hooks of another version are removed, and each entry of
// hooks.json that is not there is added in a group of its own after the
// user's. An entry counts as there wherever it is, equal as JSON (the
// user may have moved it into a group of theirs).
func addHooks(root, tmpl *ojValue) (changed bool, err error) {
	hooks := root.get("hooks")
	if hooks == nil {
		hooks = &ojValue{kind: '{'}
		root.add("hooks", hooks)
		changed = true
	} else if hooks.kind != '{' {
		return false, errors.New(`"hooks" is not an object`)
	}
	for _, ev := range tmpl.members {
		groups := hooks.get(ev.key)
		if groups == nil {
			groups = &ojValue{kind: '['}
			hooks.add(ev.key, groups)
			changed = true
		} else if groups.kind != '[' {
			return false, fmt.Errorf(`"hooks.%s" is not an array`, ev.key)
		}
		var want []*ojValue // pickup's hook entries for the event
		for _, g := range ev.val.elems {
			want = append(want, g.get("hooks").elems...)
		}
		stale := func(h *ojValue) bool {
			return isPickupHook(h) && !slices.ContainsFunc(want, func(w *ojValue) bool { return ojEqual(w, h) })
		}
		if removeHookEntries(groups, stale) > 0 {
			changed = true
		}
		for _, g := range ev.val.elems {
			h := g.get("hooks").elems[0]
			if hasHook(groups, h) {
				continue
			}
			groups.elems = append(groups.elems, ojClone(g))
			changed = true
		}
	}
	return changed, nil
}

// removeHooks removes every hook of pickup's, then the groups, event arrays
// and "hooks" object that this emptied. Anything that was empty before
// stays.
func removeHooks(root *ojValue) bool {
	hooks := root.get("hooks")
	if hooks == nil || hooks.kind != '{' {
		return false
	}
	changed := false
	kept := hooks.members[:0:0]
	for _, m := range hooks.members {
		if m.val.kind == '[' && removeHookEntries(m.val, isPickupHook) > 0 {
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

// removeHookEntries removes the hook entries that drop reports from an
// event's array of groups, and the groups that this left without hooks. It
// returns how many entries it removed.
func removeHookEntries(groups *ojValue, drop func(*ojValue) bool) int {
	n := 0
	kept := groups.elems[:0:0]
	for _, g := range groups.elems {
		list := g.get("hooks")
		if g.kind == '{' && list != nil && list.kind == '[' {
			before := len(list.elems)
			rest := list.elems[:0:0]
			for _, h := range list.elems {
				if !drop(h) {
					rest = append(rest, h)
				}
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

// hasHook reports whether an event's groups hold the hook entry h.
func hasHook(groups *ojValue, h *ojValue) bool {
	for _, g := range groups.elems {
		if list := g.get("hooks"); list != nil && list.kind == '[' {
			if slices.ContainsFunc(list.elems, func(x *ojValue) bool { return ojEqual(x, h) }) {
				return true
			}
		}
	}
	return false
}
