% Octave writer -> C reader: packets k = 1..N every 10 ms (values of expected_packet, some
% fields given as doubles to exercise conversion); octblock read checks them.
TYPE = 'k:u32 a:i8 b:u8 c:i16 d:u16 e:i32 f:u32 g:i64 h:u64 x:f32[2] y:f64[3]';
w = ard_port ('w', 'out', TYPE, 'connection', 'ow');
ard_init ({});
for k = 1:400
  p = expected_packet (k);
  p.a = double (p.a);          % converted to i8 by the binding
  p.y = p.y';                  % a column vector is accepted too
  ard_send (w, p);
  info = ard_info (w);
  assert (info.seq == uint64 (k));
  pause (0.01);
  if exist (getenv ('STOPFILE'), 'file')
    break;
  end
end
