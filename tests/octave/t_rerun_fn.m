function t_rerun_fn(count)
  % A writer function whose port is guarded by the onCleanup object of ard_port: the port is
  % closed when the function ends, on an error or on Ctrl-C, so the writer role is released
  % at once (run.sh interrupt checks it with a C writer).
  T = 'k:u32 a:i8 b:u8 c:i16 d:u16 e:i32 f:u32 g:i64 h:u64 x:f32[2] y:f64[3]';
  [w, guard] = ard_port ('fw', 'out', T, 'connection', 'i.fn');
  ard_init ({});
  printf ('t_rerun_fn: writing on %s\n', ard_info (w).connection);
  fflush (stdout);
  k = 0;
  while k < count
    k = k + 1;
    ard_send (w, expected_packet (k));
    pause (0.01);
  end
  printf ('t_rerun_fn: done, %d packets\n', k);
end
