% SIGINT (Ctrl-C) during a blocking ard_rec: the receive ends with ardnet:ARD_EINTR and
% every port of the block is closed, the writer role released; the binding stays usable (a
% port declared anew works), and clearing the MEX file releases its writer. The driver
% (run.sh interrupt) sends SIGINT once it has read 'blocked'.
blk = getenv ('OCTBLOCK');
T = 'k:u32 a:i8 b:u8 c:i16 d:u16 e:i32 f:u32 g:i64 h:u64 x:f32[2] y:f64[3]';
w = ard_port ('w', 'out', T, 'connection', 'i.held');
r = ard_port ('r', 'in', T, 'connection', 'i.silent');
ard_init ({});
unwind_protect
  printf ('blocked\n');
  fflush (stdout);
  p = ard_rec (r);                                      % nobody writes i.silent
  printf ('rec returned without an interrupt\n');
unwind_protect_cleanup
  err = lasterror ();
  printf ('error id: %s\n', err.identifier);
  printf ('writer held: %d\n', system ([blk ' trywrite i.held']) == 6);
  try
    ard_send (w, expected_packet (1));
    printf ('closed port still sends\n');
  catch e
    printf ('closed port: %s\n', e.identifier);
  end
  w = ard_port ('w', 'out', T, 'connection', 'i.held');
  ard_init ({});
  ard_send (w, expected_packet (1));
  printf ('port usable: %d\n', ard_info (w).seq == 1);
  printf ('held again: %d\n', system ([blk ' trywrite i.held']) == 6);
  clear ardnet_mex;
  printf ('after clear: %d\n', system ([getenv('OCTBLOCK') ' trywrite i.held']));
end_unwind_protect
