% A writer script run, interrupted (Ctrl-C) and run again in the same session (run.sh
% interrupt feeds an interactive Octave): its ard_port of a name that is still open starts
% the block anew, so the run wires and attaches as the first did. Set before running it:
% rerun_args (the block's options) and rerun_count (packets to send, Inf: until interrupted).
T = 'k:u32 a:i8 b:u8 c:i16 d:u16 e:i32 f:u32 g:i64 h:u64 x:f32[2] y:f64[3]';
w = ard_port ('w', 'out', T, 'connection', 'i.default');
s = ard_port ('s', 'in', T, 'connection', 'i.silent');  % a second port, never written
ard_init (rerun_args);
printf ('t_rerun: writing on %s\n', ard_info (w).connection);
fflush (stdout);
k = 0;
while k < rerun_count
  k = k + 1;
  ard_send (w, expected_packet (k));
  pause (0.01);
end
assert (ard_info (w).seq >= k && isempty (ard_tryrec (s)));
printf ('t_rerun: done, %d packets\n', k);
