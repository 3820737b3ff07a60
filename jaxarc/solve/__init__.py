"""Solving ARC tasks from their demonstrations: the ARC Prize submission.

* :mod:`jaxarc.solve.problem`: a task as the solver may see it (demonstration pairs and
  test *inputs*; test outputs never enter it);
* :mod:`jaxarc.solve.candidates`: the finite set of environment actions the search tries;
* :mod:`jaxarc.solve.search`: breadth-first search over action sequences, pruned by
  equivalence, replayed with the environment's own operations;
* :mod:`jaxarc.solve.policy_attempts`: a trained policy's two attempts per test input;
* :mod:`jaxarc.solve.test_time`: test-time RL, a policy learning each task from its
  demonstrations before its two attempts;
* :mod:`jaxarc.solve.program_rl`: a program policy learned from scratch on each task's
  demonstrations by GRPO, over the environment's actions;
* :mod:`jaxarc.solve.program_prior`: a prior over the kinds of actions those programs are
  made of, pretrained by reward on other tasks;
* :mod:`jaxarc.solve.progress_log`: the tasks a long run has finished, kept so that a
  stopped run resumes;
* :mod:`jaxarc.solve.submission`: the ARC Prize submission format, its validator, pass@2;
* :mod:`jaxarc.solve.solver`: every task of a source, with a budget, to a submission.
"""
