function ard_send(p, packet)
  % ard_send(P, PACKET) publishes PACKET on OUT port P: a struct with exactly the fields of
  %   the port's type (arrays as vectors of the declared length; any numeric class, converted
  %   as Octave converts: rounded and saturated for integers), or a uint8 vector for an opaque
  %   port. Never blocks. A missing, extra or wrongly sized field is ardnet:ARD_ETYPE.
  ardnet_mex ('send', p, packet);
end
