% C writer -> Octave reader: 20 packets received, each equal field by field (classes, sizes,
% values) to what octblock sent; seq and skipped from ard_info agree with the packet counter.
TYPE = 'k:u32 a:i8 b:u8 c:i16 d:u16 e:i32 f:u32 g:i64 h:u64 x:f32[2] y:f64[3]';
r = ard_port ('r', 'in', TYPE, 'connection', 'cw');
ard_init ({});
last = 0;
for i = 1:20
  p = ard_rec (r, 5);
  if isempty (p)
    error ('t_reader: no packet within 5 s after %d', i - 1);
  end
  k = double (p.k);
  check_packet (p, k);
  info = ard_info (r);
  assert (info.seq == uint64 (k));          % octblock sends k as packet number k
  if last > 0
    assert (k > last);
    assert (double (info.skipped) == k - last - 1);
  end
  last = k;
end
printf ('t_reader: 20 packets ok, last k=%d\n', last);
