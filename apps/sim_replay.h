/* mal-sim replay: the policy's first decisions of bench/regret.sh, replayed with the
 * costs measured in its runs (sim_replay.c). */
#ifndef MAL_SIM_REPLAY_H
#define MAL_SIM_REPLAY_H

/* Read the replay file at `path`, print each scenario's replay and the summary line;
 * returns 0, or 1 with a message naming the file and line on stderr. */
int sim_replay(const char *path);

#endif /* MAL_SIM_REPLAY_H */
