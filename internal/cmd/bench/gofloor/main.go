// Command gofloor does nothing: scripts/bench times it as the cost of
// starting any Go program on the machine, the floor under every figure of
// pickup as a process.
package main

func main() {}
