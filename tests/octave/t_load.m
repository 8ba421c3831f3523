% ard_load on a file recorded by `ard record` from octblock's writer: every row equals the
% packet that was sent (field by field, classes included), times and sequence numbers agree,
% and the resampled view holds the latest packet at each time.
[L, info] = ard_load (getenv ('MCAP'));
assert (isfield (L, 'lw') && strcmp (L.lw.name, 'lw'));
s = L.lw;
n = numel (s.t);
assert (n == 300, sprintf ('%d packets loaded, 300 recorded', n));
assert (info.complete && info.messages == 300);
fields = fieldnames (expected_packet (1));
for r = 1:n
  p = struct ();
  for i = 1:numel (fields)
    p.(fields{i}) = s.(fields{i})(r, :);
  end
  k = double (p.k);
  check_packet (p, k);
  assert (s.seq(r) == uint64 (k));
end
assert (isequal (size (s.y), [n 3]) && isa (s.h, 'uint64') && isa (s.log_ns, 'int64'));
assert (all (diff (double (s.k)) > 0) && all (diff (s.t) >= 0) && s.t(1) == 0);
assert (all (s.real_ns <= s.log_ns));                    % sent before it was received
assert (abs (double (s.log_ns(end) - s.log_ns(1))) * 1e-9 - s.t(end) < 1e-6);

% Resampled at 1 kHz: row j is the newest packet with t <= T(j).
R = ard_load (getenv ('MCAP'), 'rate', 1000);
T = R.lw.t;
assert (T(1) == 0 && abs (T(2) - 0.001) < 1e-12 && T(end) <= s.t(end) + 1e-9);
for j = 1:numel (T)
  newest = find (s.t <= T(j), 1, 'last');
  assert (R.lw.valid(j) && R.lw.k(j) == s.k(newest) && isequal (R.lw.y(j, :), s.y(newest, :)));
end
% Onto given times: before the first packet nothing is valid (NaN, 0), after the last the
% last packet holds.
R = ard_load (getenv ('MCAP'), 'time', [-1; 0; s.t(end) + 5]);
assert (isequal (R.lw.valid, [false; true; true]));
assert (all (isnan (R.lw.y(1, :))) && R.lw.k(1) == 0 && isa (R.lw.k, 'uint32'));
assert (R.lw.k(2) == s.k(1) && R.lw.k(3) == s.k(end));
% A file that is not a recording is an ardnet:ARD_ESTALE error naming it.
bad = [tempname() '.mcap'];
fid = fopen (bad, 'w'); fwrite (fid, 'not a recording'); fclose (fid);
m = expect_error ('ardnet:ARD_ESTALE', @ard_load, bad);
assert (~isempty (strfind (m, bad)));
delete (bad);
printf ('t_load: %d packets ok\n', n);
