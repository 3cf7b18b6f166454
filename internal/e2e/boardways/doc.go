// Package boardways tests the live board (pickup board) the way people
// use it: in a real terminal (tmux), over a board that real agent
// processes (executable bash scripts) claim and finish sessions on, one of
// them killed with SIGKILL. It reads the screen with tmux capture-pane
// and the board process's CPU time from /proc.
package boardways
