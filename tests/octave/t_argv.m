% Run as a script file with block options after it (`octave t_argv.m --ard r=e.wired extra`):
% ard_init() with no argument takes Octave's argv(), wires the port and leaves the rest.
addpath (getenv ('ARD_OCTAVE_PATH'));
r = ard_port ('r', 'in', 'f64');
rest = ard_init ();
assert (isequal (rest, {'extra'}), 'rest of argv');
assert (strcmp (ard_info (r).connection, 'e.wired'));
printf ('t_argv: ok\n');
