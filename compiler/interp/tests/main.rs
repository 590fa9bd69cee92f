mod numeric;
