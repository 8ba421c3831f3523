function check_packet(p, k)
  % Fail unless packet struct p holds exactly expected_packet(k): same fields, same classes,
  % same sizes (row vectors), same values.
  e = expected_packet (k);
  fe = sort (fieldnames (e));
  fp = sort (fieldnames (p));
  if ~isequal (fe, fp)
    error ('check:fields', 'packet %d: fields %s, expected %s', k, strjoin (fp', ','), strjoin (fe', ','));
  end
  for i = 1:numel (fe)
    f = fe{i};
    if ~strcmp (class (p.(f)), class (e.(f))) || ~isequal (size (p.(f)), size (e.(f))) ...
        || ~isequal (p.(f), e.(f))
      error ('check:value', 'packet %d: field %s is %s %s, expected %s %s', k, f, ...
             class (p.(f)), mat2str (p.(f)), class (e.(f)), mat2str (e.(f)));
    end
  end
end
