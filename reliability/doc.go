// Package reliability holds no code: its tests are the short versions of
// the chaos runs recorded in docs/RELIABILITY.md. Each runs a built-in
// chaos scenario (fair-lock-chaos, queue-chaos, election-chaos) against a
// local three-node ensemble for a few seconds, with every fault kind the
// scenario has, and checks that the run saw its faults and no violation:
// no two lock holders overlapping, no lost or duplicated queue item, never
// two leaders, no znode left behind. TestZombie checks the opposite: with
// holders that ignore Lost(), the overlap happens and fencing catches it.
package reliability
