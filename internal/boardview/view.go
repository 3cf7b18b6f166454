package boardview

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/sessions"
)

// Options are what a rendering depends on besides the state and the UI.
type Options struct {
	Width, Height int
	Now           time.Time
	// Color styles the text (the live board); without it the rendering
	// is plain text (pickup board --once, the golden files).
	Color bool
}

// Throughput is drawn in intervals of sparkEvery.
const sparkEvery = 5 * time.Minute

// tone is how a line stands out.
type tone int

const (
	plain tone = iota
	dim
	heading
	alive
	unknown
	stale
	dead
	warn
)

// line is one line of the screen, clean text exactly Width wide.
type line struct {
	text     string
	tone     tone
	selected bool
}

// Render draws the board: exactly o.Height lines of o.Width columns. It
// records the selectable rows in u (for Key).
func Render(s *State, u *UI, o Options) string {
	o.Width, o.Height = max(o.Width, 20), max(o.Height, 5)
	var lines []line
	switch u.Mode {
	case ModeHelp:
		lines = helpLines(o)
	case ModeDetail:
		lines = detailLines(s, u, o)
	default:
		lines = boardLines(s, u, o)
	}
	for len(lines) < o.Height {
		lines = append(lines, line{text: fit("", o.Width)})
	}
	lines = lines[:o.Height]
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(paint(l, o.Color))
	}
	return b.String()
}

// Plain is Render for a script or a log: the same picture, without the
// blank lines below it and the spaces that end its lines.
func Plain(s *State, u *UI, o Options) string {
	o.Color = false
	lines := strings.Split(Render(s, u, o), "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n") + "\n"
}

var styles = map[tone]lipgloss.Style{
	dim:     lipgloss.NewStyle().Faint(true),
	heading: lipgloss.NewStyle().Bold(true),
	alive:   lipgloss.NewStyle().Foreground(lipgloss.Color("2")),
	unknown: lipgloss.NewStyle().Foreground(lipgloss.Color("6")),
	stale:   lipgloss.NewStyle().Foreground(lipgloss.Color("3")),
	dead:    lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("15")).Background(lipgloss.Color("1")),
	warn:    lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("0")).Background(lipgloss.Color("3")),
}

// paint styles a line; its text is clean (see Clean), so the only escape
// sequences on the screen are the styles'.
func paint(l line, color bool) string {
	if !color {
		return l.text
	}
	st, ok := styles[l.tone]
	if l.selected {
		st, ok = st.Reverse(true), true
	}
	if !ok {
		return l.text
	}
	return st.Render(l.text)
}

func stateTone(st claim.OwnerState) tone {
	switch st {
	case claim.OwnerAlive:
		return alive
	case claim.OwnerDead:
		return dead
	case claim.OwnerStale:
		return stale
	}
	return unknown
}

// block is one section of the board: its title line, its column header
// and its rows; rows with an id are sessions one can select.
type block struct {
	title  string
	header string
	rows   []line
	ids    []string // per row; "" for a row that is not a session
	none   string   // the row shown when there are none
	want   int      // lines given so far
	// more is how many rows follow rows that were not drawn at all: no
	// screen shows them (a todo of thousands draws the screenful around
	// the selection).
	more int
}

func boardLines(s *State, u *UI, o Options) []line {
	w := o.Width
	var head []line
	head = append(head, line{text: fit(headerText(s, u, o), w), tone: heading})
	if why := staleWhy(s); why != "" {
		head = append(head, line{text: fit("! view may be stale: "+why, w), tone: warn})
	}
	foot := line{text: fit("↑↓ select  enter open  o owner  t tag  s state  x clear  ? help  q quit", w), tone: dim}

	blocks := []*block{ownersBlock(s, u, o), waitingBlock(s, u, o), failedBlock(s, u, o), locksBlock(s, o), movementBlock(s, o)}
	var shown []*block
	for _, b := range blocks {
		if b != nil {
			shown = append(shown, b)
		}
	}
	// Each block gets its title, then up to a few rows each in turn, then
	// what is left goes to the blocks in order of what needs eyes: the
	// owners (a dead one above all), the set-aside, the locks, what
	// waits, the history.
	room := o.Height - len(head) - 1
	need := func(b *block) int {
		n := len(b.rows) + b.more
		if n == 0 {
			n = 1
		}
		if b.header != "" {
			n++
		}
		return n
	}
	for _, b := range shown {
		if room <= 0 {
			break
		}
		b.want = 1 // the title
		room--
	}
	if len(shown) > 0 && shown[0].want > 0 {
		// The owners first: who is dead is what a glance is for.
		n := min(need(shown[0]), 8, room)
		shown[0].want += n
		room -= n
	}
	for range 4 {
		for _, b := range shown[1:] {
			if room > 0 && b.want > 0 && b.want-1 < need(b) {
				b.want++
				room--
			}
		}
	}
	for _, b := range shown {
		if n := min(need(b)-(b.want-1), room); n > 0 && b.want > 0 {
			b.want += n
			room -= n
		}
	}
	u.rows = u.rows[:0]
	for _, b := range blocks {
		if b == nil {
			continue
		}
		for _, id := range b.ids {
			if id != "" {
				u.rows = append(u.rows, id)
			}
		}
	}
	out := head
	for _, b := range shown {
		out = append(out, b.lay(w, u.Selected)...)
	}
	return append(out, foot)
}

// lay draws the block in b.want lines: the rows scrolled so that the
// selected one shows, and "… N more" when some do not fit.
func (b *block) lay(w int, selected string) []line {
	if b.want == 0 {
		return nil
	}
	out := []line{{text: fit(b.title, w), tone: heading}}
	room := b.want - 1
	if room == 0 {
		return out
	}
	if len(b.rows) == 0 {
		return append(out, line{text: fit("  "+b.none, w), tone: dim})
	}
	if b.header != "" && (room >= 3 || room > len(b.rows)) {
		// Column names only where rows fit under them.
		out = append(out, line{text: fit(b.header, w), tone: dim})
		room--
	}
	if room <= 0 {
		return out
	}
	first, last := 0, len(b.rows)
	if last > room || (b.more > 0 && last >= room) {
		last = max(room-1, 1) // the last line says how many more
		for i, id := range b.ids {
			if id != "" && id == selected && i >= last {
				first = i - last + 1
			}
		}
	}
	for i := first; i < first+last && i < len(b.rows); i++ {
		l := b.rows[i]
		l.selected = b.ids[i] != "" && b.ids[i] == selected
		if l.selected {
			l.text = fit("▸"+strings.TrimPrefix(l.text, " "), w)
		}
		out = append(out, l)
	}
	if more := len(b.rows) + b.more - last; more > 0 && last < room {
		out = append(out, line{text: fit(fmt.Sprintf("  … %d more", more), w), tone: dim})
	}
	return out
}

func headerText(s *State, u *UI, o Options) string {
	dir := Clean(s.Dir)
	shared := ""
	if s.Shared != "" {
		shared = " (shared via " + Clean(s.Shared) + ")"
	}
	counts := fmt.Sprintf("%d todo  %d doing  %d done  %d failed", s.Count(sessions.Todo), s.Count(sessions.Doing), s.Count(sessions.Done), s.Count(sessions.Failed))
	if !u.Filter.empty() {
		counts += "  filter:" + filterText(u.Filter)
	}
	updated := ""
	if !s.Updated.IsZero() {
		updated = "updated " + s.Updated.In(o.Now.Location()).Format("15:04:05") + " (" + labelAge(o.Now.Sub(s.Updated)) + ")"
	}
	// The counts and the age matter most, then whether the board is
	// shared, then where it is: a long path is cut at its start.
	room := o.Width - width(counts) - width(updated) - width(shared) - len("pickup board ") - 4
	left := counts
	switch {
	case room >= width(dir):
		left = "pickup board " + dir + shared + "  " + counts
	case room >= 12:
		left = "pickup board " + ansi.TruncateLeft(dir, width(dir)-room+1, "…") + shared + "  " + counts
	case o.Width-width(counts)-width(updated)-width(shared)-2 >= 0:
		left = counts + shared
	}
	gap := o.Width - width(left) - width(updated)
	if gap < 1 {
		return left
	}
	return left + strings.Repeat(" ", gap) + updated
}

func filterText(f Filter) string {
	var parts []string
	if f.Owner != "" {
		parts = append(parts, " owner="+Clean(f.Owner))
	}
	if f.Tag != "" {
		parts = append(parts, " tag="+Clean(f.Tag))
	}
	if f.State != "" {
		parts = append(parts, " state="+string(f.State))
	}
	return strings.Join(parts, "")
}

// staleWhy says why the view may be behind the board, or "".
func staleWhy(s *State) string {
	var why []string
	if s.WatchErr != "" {
		why = append(why, "watcher stopped: "+Clean(s.WatchErr))
	} else if !s.watching {
		why = append(why, "not watching the board")
	}
	if s.FetchErr != "" {
		why = append(why, "fetch failing: "+Clean(s.FetchErr))
	}
	if s.DBErr != "" {
		why = append(why, "database unreachable since "+s.DBDown.Format("15:04:05")+", showing the last view: "+Clean(s.DBErr))
	}
	return strings.Join(why, "; ")
}

func ownersBlock(s *State, u *UI, o Options) *block {
	cols := []column{{name: "  OWNER", max: 34}, {name: "STATE"}, {name: "HOST", max: 16, drop: 3}, {name: "LEASE", drop: 4},
		{name: "HEARTBEAT", drop: 2}, {name: "HOLDS", drop: 5}, {name: "WHY", flex: true, drop: 1}}
	var cells [][]string
	var tones []tone
	var ids []string
	rows := s.Owners(o.Now)
	for _, r := range rows {
		if u.Filter.Owner != "" && r.Name != u.Filter.Owner {
			continue
		}
		var holds []*Item
		for _, it := range r.Holds {
			if u.Filter.keeps(it) {
				holds = append(holds, it)
			}
		}
		if (u.Filter.Tag != "" || (u.Filter.State != "" && u.Filter.State != sessions.Doing)) && len(holds) == 0 {
			continue
		}
		state := string(r.State)
		if state == "" {
			state = "unknown"
		}
		if r.State == claim.OwnerDead {
			state = "✗ DEAD"
		}
		host := Clean(r.Host)
		if r.Elsewhere && host == "" {
			host = "other clone"
		} else if host == "" {
			host = "-"
		}
		lease, beat := "-", "-"
		if !r.LeaseCreated.IsZero() {
			lease = ageText(o.Now.Sub(r.LeaseCreated))
			beat = ageText(o.Now.Sub(r.Heartbeat)) + " ago"
			if r.Elsewhere {
				beat = "seen " + beat
			}
		}
		// The reason's "last heartbeat Ns ago" was true when judged; the
		// HEARTBEAT column says it as of now.
		reason, _, _ := strings.Cut(r.Reason, "; last heartbeat ")
		why := Clean(reason)
		if len(r.Holds) == 0 && !r.LastSeen.IsZero() {
			why = "holds nothing; last event " + ageText(o.Now.Sub(r.LastSeen)) + " ago" + sep(why)
		}
		cells = append(cells, []string{"  " + Clean(r.Name), state, host, lease, beat, fmt.Sprint(len(r.Holds)), why})
		tones = append(tones, stateTone(r.State))
		ids = append(ids, "")
		for _, it := range holds {
			cells = append(cells, []string{"    └ " + it.ID, "for " + ageText(o.Now.Sub(it.Since)), "", "", "", "", Clean(it.Title)})
			tones = append(tones, plain)
			ids = append(ids, it.ID)
		}
	}
	header, lines := table(o.Width, cols, cells)
	b := &block{title: "OWNERS (" + ownerCounts(rows) + ")", header: header, ids: ids, none: "no owner holds or held work in the last hour"}
	for i, l := range lines {
		b.rows = append(b.rows, line{text: l, tone: tones[i]})
	}
	return b
}

// ownerCounts says how many owners stand how: "4: ✗ 1 DEAD, 1 stale,
// 2 unknown, 0 alive" (the dead named even when their rows do not fit).
func ownerCounts(rows []OwnerRow) string {
	n := map[claim.OwnerState]int{}
	for _, r := range rows {
		st := r.State
		if st == "" {
			st = claim.OwnerUnknown
		}
		n[st]++
	}
	text := fmt.Sprint(len(rows))
	if len(rows) == 0 {
		return text
	}
	text += ": "
	if n[claim.OwnerDead] > 0 {
		text += fmt.Sprintf("✗ %d DEAD, ", n[claim.OwnerDead])
	}
	return text + fmt.Sprintf("%d stale, %d unknown, %d alive", n[claim.OwnerStale], n[claim.OwnerUnknown], n[claim.OwnerAlive])
}

func sep(s string) string {
	if s == "" {
		return ""
	}
	return "; " + s
}

func waitingBlock(s *State, u *UI, o Options) *block {
	if u.Filter.State != "" && u.Filter.State != sessions.Todo || u.Filter.Owner != "" {
		return nil
	}
	cols := []column{{name: "  PRI"}, {name: "ID"}, {name: "AGE", drop: 2}, {name: "TAGS", max: 20, drop: 1}, {name: "TITLE", flex: true}}
	var cells [][]string
	var tones []tone
	var ids []string
	all := s.Waiting()
	// Rows are drawn up to a screenful past the selection; the rest only
	// count (and can be selected: their ids are kept).
	limit := o.Height
	for i, it := range all {
		if it.ID == u.Selected {
			limit = i + 1 + o.Height
		}
	}
	more := 0
	for _, it := range all {
		if !u.Filter.keeps(it) {
			continue
		}
		if len(cells) >= limit {
			more++
			ids = append(ids, it.ID)
			continue
		}
		title := Clean(it.Title)
		t := plain
		if len(it.Waits.On) > 0 {
			title += " (" + waitsText(it.Waits) + ")"
			t = dim
		}
		if it.Problem != "" {
			title = "! " + title
		}
		cells = append(cells, []string{"  " + it.Priority.String(), it.ID, ageText(o.Now.Sub(it.CreatedAt)), Clean(strings.Join(it.Tags, ",")), title})
		tones = append(tones, t)
		ids = append(ids, it.ID)
	}
	header, lines := table(o.Width, cols, cells)
	b := &block{title: fmt.Sprintf("WAITING (%d, in the order next takes them)", len(all)), header: header, ids: ids, none: "nothing waits in todo/", more: more}
	for i, l := range lines {
		b.rows = append(b.rows, line{text: l, tone: tones[i]})
	}
	return b
}

// waitsText says what a session waits on, and why forever if it does:
// "waits on a, b", "waits forever on ghost: ghost does not exist".
func waitsText(w sessions.Waits) string {
	if w.Forever() {
		return "waits forever on " + Clean(strings.Join(w.On, ", ")) + ": " + Clean(w.Why())
	}
	return "waits on " + Clean(strings.Join(w.On, ", "))
}

func failedBlock(s *State, u *UI, o Options) *block {
	if u.Filter.State != "" && u.Filter.State != sessions.Failed || u.Filter.Owner != "" {
		return nil
	}
	all := s.Failed()
	if len(all) == 0 {
		return nil
	}
	cols := []column{{name: "  ID"}, {name: "TRIES"}, {name: "SINCE", drop: 2}, {name: "TITLE", max: 32, drop: 1}, {name: "LAST ERROR", flex: true}}
	var cells [][]string
	var ids []string
	for _, it := range all {
		if !u.Filter.keeps(it) {
			continue
		}
		cells = append(cells, []string{"  " + it.ID, fmt.Sprint(it.Attempts), ageText(o.Now.Sub(it.Since)) + " ago", Clean(it.Title), Clean(it.LastError)})
		ids = append(ids, it.ID)
	}
	header, lines := table(o.Width, cols, cells)
	b := &block{title: fmt.Sprintf("FAILED (%d set aside; pickup requeue ID returns one)", len(all)), header: header, ids: ids}
	for _, l := range lines {
		b.rows = append(b.rows, line{text: l, tone: stale})
	}
	return b
}

func locksBlock(s *State, o Options) *block {
	locks := s.Locks()
	if len(locks) == 0 {
		return nil
	}
	cols := []column{{name: "  KEY", max: 30}, {name: "HOLDER", max: 20}, {name: "STATE"}, {name: "AGE"}, {name: "WAITERS", drop: 1}, {name: "PROCESS", flex: true, drop: 2}}
	var cells [][]string
	var tones []tone
	for _, l := range locks {
		state := string(l.State)
		if l.Corrupt {
			state = "unreadable"
		}
		cells = append(cells, []string{"  " + Clean(l.Key), Clean(l.Owner), state, ageText(l.Age), fmt.Sprint(l.Waiters), Clean(l.Process.String())})
		switch string(l.State) {
		case "dead":
			tones = append(tones, dead)
		case "stale":
			tones = append(tones, stale)
		default:
			tones = append(tones, plain)
		}
	}
	header, lines := table(o.Width, cols, cells)
	b := &block{title: fmt.Sprintf("LOCKS (%d)", len(locks)), header: header, ids: make([]string, len(lines))}
	for i, l := range lines {
		b.rows = append(b.rows, line{text: l, tone: tones[i]})
	}
	return b
}

var sparks = []rune("▁▂▃▄▅▆▇█")

// sparkline draws counts, the highest as a full block, zero as a space.
func sparkline(counts []int) string {
	top := 0
	for _, c := range counts {
		top = max(top, c)
	}
	var b strings.Builder
	for _, c := range counts {
		if c == 0 {
			b.WriteByte(' ')
			continue
		}
		b.WriteRune(sparks[(c*len(sparks)-1)/top])
	}
	return b.String()
}

func movementBlock(s *State, o Options) *block {
	n := 24
	if o.Width < 80 {
		n = 12
	}
	counts := s.Throughput(o.Now, sparkEvery, n)
	total := 0
	for _, c := range counts {
		total += c
	}
	title := fmt.Sprintf("MOVEMENT  done per %s, last %s [%s] %d", ageText(sparkEvery), ageText(sparkEvery*time.Duration(n)), sparkline(counts), total)
	waiting, held := s.Oldest()
	if waiting != nil {
		title += "  oldest waiting " + waiting.ID + " (" + ageText(o.Now.Sub(waiting.CreatedAt)) + ")"
	}
	if held != nil {
		title += "  longest held " + held.ID + " by " + Clean(held.Owner) + " (" + ageText(o.Now.Sub(held.Since)) + ")"
	}
	b := &block{title: title, none: "no history yet (events.log is empty)"}
	hist := s.History()
	// Newest first: the tail is what moves.
	for i := len(hist) - 1; i >= 0 && len(b.rows) < 50; i-- {
		e := hist[i]
		where := e.From + " → " + e.To
		if e.From == "" {
			where = "→ " + e.To
		}
		// Ages, as everywhere on the board (the detail view gives times).
		text := fmt.Sprintf("  %4s ago  %-7s %-21s  %s", ageText(o.Now.Sub(e.Time)), Clean(e.Op), e.ID, Clean(where))
		if e.Owner != "" && !strings.Contains(e.To, e.Owner) && !strings.Contains(e.From, e.Owner) {
			text += "  by " + Clean(e.Owner)
		}
		if e.Reason != "" {
			text += "  (" + Clean(e.Reason) + ")"
		}
		t := plain
		if e.Op == "reap" || e.Op == "set aside" {
			t = stale
		}
		b.rows = append(b.rows, line{text: fit(text, o.Width), tone: t})
		b.ids = append(b.ids, "")
	}
	return b
}

func helpLines(o Options) []line {
	text := []string{
		"pickup board: every owner, what waits and what moves, live; read-only",
		"",
		"  ↑/k ↓/j     select a session (the selection stays on it as the board moves)",
		"  enter       open the selected session: its file and its history (esc: back)",
		"  o           filter by owner (each press: the next owner, then none)",
		"  t           filter by tag",
		"  s           filter by state: todo, doing, failed",
		"  x, esc      clear the filters",
		"  ?           this help (any key: back)",
		"  q, ctrl+c   quit",
		"",
		"Owners: alive (a process of its lease runs here), dead (every process exited:",
		"its sessions can be reaped), unknown (cannot be checked from here, heartbeat",
		"recent), stale (no heartbeat for the stale period). The dead come first.",
		"Waiting: todo in the order `pickup next` takes it; what each waits on, and why",
		"forever (a dependency that does not exist, a cycle).",
		"Movement: done per interval, the oldest waiting, the longest held, the history.",
		"The header says when the board last changed; a warning says when the view may",
		"be stale (the watcher stopped, a shared board's fetch failing).",
	}
	out := make([]line, 0, len(text))
	for i, t := range text {
		tn := plain
		if i == 0 {
			tn = heading
		}
		out = append(out, line{text: fit(t, o.Width), tone: tn})
	}
	return out
}

func detailLines(s *State, u *UI, o Options) []line {
	d := u.Detail
	if d == nil {
		return nil
	}
	title := "session " + d.ID
	if it, ok := s.Item(d.ID); ok {
		title += " (" + string(it.State)
		if it.Owner != "" {
			title += ", " + Clean(it.Owner)
		}
		title += ")"
	}
	var body []string
	if d.Err != "" {
		body = append(body, "cannot read it: "+Clean(d.Err))
	}
	body = append(body, strings.Split(strings.TrimRight(CleanText(d.Text), "\n"), "\n")...)
	body = append(body, "", fmt.Sprintf("HISTORY (%d events)", len(d.History)))
	for _, e := range d.History {
		text := fmt.Sprintf("  %s  %-7s %s → %s", e.Time.In(o.Now.Location()).Format("2006-01-02 15:04:05"), Clean(e.Op), Clean(e.From), Clean(e.To))
		if e.Owner != "" {
			text += "  by " + Clean(e.Owner)
		}
		if e.Reason != "" {
			text += "  (" + Clean(e.Reason) + ")"
		}
		body = append(body, text)
	}
	room := o.Height - 2
	u.Scroll = min(u.Scroll, max(len(body)-room, 0))
	out := []line{{text: fit(title, o.Width), tone: heading}}
	for i := u.Scroll; i < len(body) && len(out) <= room; i++ {
		out = append(out, line{text: fit(body[i], o.Width)})
	}
	for len(out) < o.Height-1 {
		out = append(out, line{text: fit("", o.Width)})
	}
	return append(out, line{text: fit("esc back  ↑↓ scroll  q quit", o.Width), tone: dim})
}

func width(s string) int { return ansi.StringWidth(s) }
