% examples/octave/arm_state_plot.m, without its plot: about 100 rows for 1 s, each one a
% consistent packet of octblock's arm state (q(j) = k + (j-1)/8, qd = -k, seq = k), newer
% from row to row.
[t, q, qd, seq] = arm_state_plot (1, '--ard', 'state=arm.state', 'noplot');
n = numel (t);
printf ('t_example: %d rows\n', n);
assert (n >= 10 && n <= 100);
k = q(:, 1);
assert (isequal (q, k + (0:6) / 8) && isequal (qd, repmat (-k, 1, 7)));
assert (isequal (double (seq), k) && all (diff (k) > 0) && all (diff (t) > 0));
assert (ardnet_mex ('nports') == 0);                    % the example closed its port
