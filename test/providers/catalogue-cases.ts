/**
 * The provider catalogue as test data: for each preset, what the provider publishes (discovery,
 * token and profile responses in their documented shapes), what the sign-in must send, and the
 * user and account it must produce. `test/providers/catalogue.test.ts` drives a sign-in per case.
 */

/** A stand-in answer of the provider's API. */
export interface ApiAnswer {
  method?: 'GET' | 'POST'
  /** Headers the request must carry (besides the bearer token, unless `bearer` is false). */
  headers?: Record<string, string>
  /** The access token travels elsewhere (HubSpot: in the path). */
  bearer?: false
  json?: unknown
  /** An error status instead of the answer. */
  status?: number
  /** A binary answer (a photo). */
  bytes?: Uint8Array<ArrayBuffer>
  contentType?: string
}

/** One preset of the catalogue. */
export interface CatalogueCase {
  /** The file under providers/ and @auth/core/providers/ (also the provider id). */
  file: string
  /** Options besides the credentials (an issuer, a base URL). */
  options?: Record<string, unknown>
  /** OIDC: the discovery document's endpoints (`issuer` is the configured one unless given). */
  discovery?: Record<string, unknown>
  /** Where the authorization request goes, and the parameters it must carry. */
  authorization: { endpoint: string; params: Record<string, string> }
  token: {
    url: string
    auth: 'client_secret_basic' | 'client_secret_post'
    /** Body fields besides grant_type, code, redirect_uri, code_verifier and client credentials. */
    extraBody?: Record<string, string>
    response: Record<string, unknown>
  }
  /** OIDC: the ID token's claims (iss, aud, iat, exp and nonce are added), and how it is signed. */
  idToken?: { claims: Record<string, unknown>; alg?: 'RS256' | 'HS256' }
  /** API answers by URL. */
  api?: Record<string, ApiAnswer>
  /** Apple: the callback is a form POST carrying these fields too. */
  formPost?: Record<string, string>
  /** The user the sign-in must produce (its id is always a fresh UUID). */
  user: { name?: string | null; email?: string | null; image?: string | null }
  providerAccountId: string | number
}

/** A small JPEG-like payload for photo endpoints. */
export const PHOTO = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0xfb, 0xff])

const bearer = (response: Record<string, unknown> = {}) => ({
  access_token: 'at-0123456789',
  token_type: 'Bearer',
  expires_in: 3600,
  ...response,
})

/** The catalogue, alphabetically by file. */
export const CASES: CatalogueCase[] = [
  {
    file: 'apple',
    discovery: {
      authorization_endpoint: 'https://appleid.apple.com/auth/authorize',
      token_endpoint: 'https://appleid.apple.com/auth/token',
      jwks_uri: 'https://appleid.apple.com/auth/keys',
      response_modes_supported: ['query', 'fragment', 'form_post'],
    },
    authorization: {
      endpoint: 'https://appleid.apple.com/auth/authorize',
      params: { scope: 'name email', response_mode: 'form_post' },
    },
    token: {
      url: 'https://appleid.apple.com/auth/token',
      auth: 'client_secret_post',
      response: { access_token: 'at-apple', token_type: 'Bearer', expires_in: 3600, refresh_token: 'rt-apple' },
    },
    idToken: {
      claims: {
        sub: '001234.abcdef0123456789.0123',
        email: 'Tim@privaterelay.appleid.com',
        email_verified: 'true',
        is_private_email: 'true',
        auth_time: 1700000000,
        nonce_supported: true,
      },
    },
    formPost: { user: JSON.stringify({ name: { firstName: 'Tim', lastName: 'Apple' }, email: 'tim@privaterelay.appleid.com' }) },
    user: { name: 'Tim Apple', email: 'tim@privaterelay.appleid.com', image: null },
    providerAccountId: '001234.abcdef0123456789.0123',
  },
  {
    file: 'atlassian',
    authorization: {
      endpoint: 'https://auth.atlassian.com/authorize',
      params: { audience: 'api.atlassian.com', scope: 'read:me' },
    },
    token: {
      url: 'https://auth.atlassian.com/oauth/token',
      auth: 'client_secret_basic',
      response: bearer({ scope: 'read:me', refresh_token: 'rt' }),
    },
    api: {
      'https://api.atlassian.com/me': {
        json: {
          account_type: 'atlassian',
          account_id: '557058:f3a1b2c3',
          email: 'ada@example.com',
          name: 'Ada Lovelace',
          picture: 'https://avatar-management.example/ada.png',
          account_status: 'active',
          nickname: 'ada',
          zoneinfo: 'Europe/London',
          locale: 'en-GB',
        },
      },
    },
    user: { name: 'Ada Lovelace', email: 'ada@example.com', image: 'https://avatar-management.example/ada.png' },
    providerAccountId: '557058:f3a1b2c3',
  },
  {
    file: 'auth0',
    options: { issuer: 'https://dev-abc.us.auth0.com/' },
    discovery: {
      authorization_endpoint: 'https://dev-abc.us.auth0.com/authorize',
      token_endpoint: 'https://dev-abc.us.auth0.com/oauth/token',
      userinfo_endpoint: 'https://dev-abc.us.auth0.com/userinfo',
      jwks_uri: 'https://dev-abc.us.auth0.com/.well-known/jwks.json',
    },
    authorization: { endpoint: 'https://dev-abc.us.auth0.com/authorize', params: { scope: 'openid profile email' } },
    token: { url: 'https://dev-abc.us.auth0.com/oauth/token', auth: 'client_secret_basic', response: bearer() },
    idToken: {
      claims: {
        sub: 'auth0|64f0c0ffee',
        nickname: 'grace',
        name: 'Grace Hopper',
        picture: 'https://s.gravatar.com/avatar/grace.png',
        email: 'Grace@Example.com',
        email_verified: true,
      },
    },
    user: { name: 'Grace Hopper', email: 'grace@example.com', image: 'https://s.gravatar.com/avatar/grace.png' },
    providerAccountId: 'auth0|64f0c0ffee',
  },
  {
    file: 'authentik',
    options: { issuer: 'https://authentik.example.com/application/o/webapp/' },
    discovery: {
      authorization_endpoint: 'https://authentik.example.com/application/o/authorize/',
      token_endpoint: 'https://authentik.example.com/application/o/token/',
      userinfo_endpoint: 'https://authentik.example.com/application/o/userinfo/',
      jwks_uri: 'https://authentik.example.com/application/o/webapp/jwks/',
    },
    authorization: { endpoint: 'https://authentik.example.com/application/o/authorize/', params: { scope: 'openid profile email' } },
    token: { url: 'https://authentik.example.com/application/o/token/', auth: 'client_secret_basic', response: bearer() },
    idToken: {
      claims: {
        sub: '3f2a0c9e8d7b6a5f4e3d2c1b0a9f8e7d',
        email: 'akadmin@example.com',
        email_verified: true,
        name: 'authentik Default Admin',
        given_name: 'authentik Default Admin',
        preferred_username: 'akadmin',
        nickname: 'akadmin',
        groups: ['authentik Admins'],
      },
    },
    user: { name: 'authentik Default Admin', email: 'akadmin@example.com' },
    providerAccountId: '3f2a0c9e8d7b6a5f4e3d2c1b0a9f8e7d',
  },
  {
    file: 'azure-ad-b2c',
    options: { issuer: 'https://contoso.b2clogin.com/775527ff-9a37-4307-8b3d-cc311f58d925/v2.0/' },
    discovery: {
      authorization_endpoint: 'https://contoso.b2clogin.com/contoso.onmicrosoft.com/b2c_1_signin/oauth2/v2.0/authorize',
      token_endpoint: 'https://contoso.b2clogin.com/contoso.onmicrosoft.com/b2c_1_signin/oauth2/v2.0/token',
      jwks_uri: 'https://contoso.b2clogin.com/contoso.onmicrosoft.com/b2c_1_signin/discovery/v2.0/keys',
    },
    authorization: {
      endpoint: 'https://contoso.b2clogin.com/contoso.onmicrosoft.com/b2c_1_signin/oauth2/v2.0/authorize',
      params: { scope: 'openid profile email' },
    },
    token: {
      url: 'https://contoso.b2clogin.com/contoso.onmicrosoft.com/b2c_1_signin/oauth2/v2.0/token',
      auth: 'client_secret_basic',
      response: { id_token_expires_in: 3600, profile_info: 'eyJ2ZXIiOiIxLjAifQ', ...bearer() },
    },
    idToken: {
      claims: {
        sub: '8a3f1d2e-0b4c-4d5e-9f6a-7b8c9d0e1f2a',
        oid: '8a3f1d2e-0b4c-4d5e-9f6a-7b8c9d0e1f2a',
        name: 'Katherine Johnson',
        emails: ['katherine@example.com', 'kj@example.org'],
        tfp: 'B2C_1_signin',
        ver: '1.0',
      },
    },
    user: { name: 'Katherine Johnson', email: 'katherine@example.com', image: null },
    providerAccountId: '8a3f1d2e-0b4c-4d5e-9f6a-7b8c9d0e1f2a',
  },
  {
    file: 'battlenet',
    options: { issuer: 'https://oauth.battle.net' },
    discovery: {
      authorization_endpoint: 'https://oauth.battle.net/authorize',
      token_endpoint: 'https://oauth.battle.net/token',
      userinfo_endpoint: 'https://oauth.battle.net/userinfo',
      jwks_uri: 'https://oauth.battle.net/jwks/certs',
    },
    authorization: { endpoint: 'https://oauth.battle.net/authorize', params: { scope: 'openid profile email' } },
    token: {
      url: 'https://oauth.battle.net/token',
      auth: 'client_secret_basic',
      response: bearer({ token_type: 'bearer', expires_in: 86399, scope: 'openid', sub: '123456789' }),
    },
    idToken: { claims: { sub: '123456789', battle_tag: 'Thrall#1234' } },
    user: { name: 'Thrall#1234', email: null, image: null },
    providerAccountId: '123456789',
  },
  {
    file: 'bitbucket',
    authorization: { endpoint: 'https://bitbucket.org/site/oauth2/authorize', params: { scope: 'account' } },
    token: {
      url: 'https://bitbucket.org/site/oauth2/access_token',
      auth: 'client_secret_basic',
      response: { access_token: 'at-bb', scopes: 'account', token_type: 'bearer', expires_in: 7200, refresh_token: 'rt' },
    },
    api: {
      'https://api.bitbucket.org/2.0/user': {
        json: {
          display_name: 'Linus Torvalds',
          links: {
            self: { href: 'https://api.bitbucket.org/2.0/users/%7B0a1b%7D' },
            avatar: { href: 'https://secure.gravatar.com/avatar/linus.png' },
            html: { href: 'https://bitbucket.org/%7B0a1b%7D/' },
          },
          created_on: '2012-01-01T00:00:00+00:00',
          type: 'user',
          uuid: '{0a1b2c3d-0000-1111-2222-333344445555}',
          has_2fa_enabled: null,
          username: 'linus',
          is_staff: false,
          account_id: '557058:0a1b2c3d',
          nickname: 'linus',
          account_status: 'active',
          location: null,
        },
      },
    },
    user: { name: 'Linus Torvalds', image: 'https://secure.gravatar.com/avatar/linus.png' },
    providerAccountId: '557058:0a1b2c3d',
  },
  {
    file: 'box',
    authorization: { endpoint: 'https://account.box.com/api/oauth2/authorize', params: { scope: 'openid profile email' } },
    token: {
      url: 'https://api.box.com/oauth2/token',
      auth: 'client_secret_basic',
      response: { access_token: 'at-box', expires_in: 3600, restricted_to: [], refresh_token: 'rt', token_type: 'bearer' },
    },
    api: {
      'https://api.box.com/2.0/users/me': {
        json: {
          type: 'user',
          id: '11446498',
          name: 'Aaron Levie',
          login: 'ceo@example.com',
          avatar_url: 'https://www.box.com/api/avatar/large/181216415',
          status: 'active',
        },
      },
    },
    user: { name: 'Aaron Levie', email: 'ceo@example.com', image: 'https://www.box.com/api/avatar/large/181216415' },
    providerAccountId: '11446498',
  },
  {
    file: 'cognito',
    options: { issuer: 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf123' },
    discovery: {
      authorization_endpoint: 'https://webapp.auth.eu-west-1.amazoncognito.com/oauth2/authorize',
      token_endpoint: 'https://webapp.auth.eu-west-1.amazoncognito.com/oauth2/token',
      userinfo_endpoint: 'https://webapp.auth.eu-west-1.amazoncognito.com/oauth2/userInfo',
      jwks_uri: 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf123/.well-known/jwks.json',
    },
    authorization: {
      endpoint: 'https://webapp.auth.eu-west-1.amazoncognito.com/oauth2/authorize',
      params: { scope: 'openid profile email' },
    },
    token: {
      url: 'https://webapp.auth.eu-west-1.amazoncognito.com/oauth2/token',
      auth: 'client_secret_basic',
      response: bearer({ refresh_token: 'rt' }),
    },
    idToken: {
      claims: {
        sub: 'aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee',
        'cognito:username': 'margaret',
        email: 'margaret@example.com',
        email_verified: true,
        name: 'Margaret Hamilton',
        token_use: 'id',
      },
    },
    user: { name: 'Margaret Hamilton', email: 'margaret@example.com' },
    providerAccountId: 'aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee',
  },
  {
    file: 'discord',
    authorization: { endpoint: 'https://discord.com/api/oauth2/authorize', params: { scope: 'identify email' } },
    token: {
      url: 'https://discord.com/api/oauth2/token',
      auth: 'client_secret_basic',
      response: bearer({ expires_in: 604800, refresh_token: 'rt', scope: 'identify email' }),
    },
    api: {
      'https://discord.com/api/users/@me': {
        json: {
          id: '80351110224678912',
          username: 'nelly',
          discriminator: '0',
          global_name: 'Nelly',
          avatar: '8342729096ea3675442027381ff50dfe',
          verified: true,
          email: 'nelly@discord.com',
          flags: 64,
          banner: '06c16474723fe537c283b8efa61a30c8',
          accent_color: 16711680,
          premium_type: 1,
          public_flags: 64,
          locale: 'en-US',
        },
      },
    },
    user: {
      name: 'Nelly',
      email: 'nelly@discord.com',
      image: 'https://cdn.discordapp.com/avatars/80351110224678912/8342729096ea3675442027381ff50dfe.png',
    },
    providerAccountId: '80351110224678912',
  },
  {
    file: 'dropbox',
    authorization: {
      endpoint: 'https://www.dropbox.com/oauth2/authorize',
      params: { token_access_type: 'offline', scope: 'account_info.read' },
    },
    token: {
      url: 'https://api.dropboxapi.com/oauth2/token',
      auth: 'client_secret_basic',
      response: {
        access_token: 'sl.at-dropbox',
        expires_in: 14400,
        token_type: 'bearer',
        scope: 'account_info.read',
        refresh_token: 'rt',
        account_id: 'dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc',
        uid: '12345',
      },
    },
    api: {
      'https://api.dropboxapi.com/2/users/get_current_account': {
        method: 'POST',
        json: {
          account_id: 'dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc',
          name: {
            given_name: 'Franz',
            surname: 'Ferdinand',
            familiar_name: 'Franz',
            display_name: 'Franz Ferdinand (Personal)',
            abbreviated_name: 'FF',
          },
          email: 'franz@dropbox.com',
          email_verified: true,
          profile_photo_url: 'https://dl-web.dropbox.com/account_photo/get/dbaphid%3AAAHWGmIXV3s',
          disabled: false,
          country: 'US',
          locale: 'en',
        },
      },
    },
    user: {
      name: 'Franz Ferdinand (Personal)',
      email: 'franz@dropbox.com',
      image: 'https://dl-web.dropbox.com/account_photo/get/dbaphid%3AAAHWGmIXV3s',
    },
    providerAccountId: 'dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc',
  },
  {
    file: 'facebook',
    authorization: { endpoint: 'https://www.facebook.com/v19.0/dialog/oauth', params: { scope: 'email' } },
    token: {
      url: 'https://graph.facebook.com/oauth/access_token',
      auth: 'client_secret_basic',
      response: { access_token: 'EAAB-at', token_type: 'bearer', expires_in: 5183944 },
    },
    api: {
      'https://graph.facebook.com/me?fields=id,name,email,picture': {
        json: {
          id: '10158295869832145',
          name: 'Mark Example',
          email: 'mark@example.com',
          picture: {
            data: { height: 50, is_silhouette: false, url: 'https://platform-lookaside.fbsbx.com/p.jpg', width: 50 },
          },
        },
      },
    },
    user: { name: 'Mark Example', email: 'mark@example.com', image: 'https://platform-lookaside.fbsbx.com/p.jpg' },
    providerAccountId: '10158295869832145',
  },
  {
    file: 'figma',
    authorization: { endpoint: 'https://www.figma.com/oauth', params: { scope: 'files:read' } },
    token: {
      url: 'https://api.figma.com/v1/oauth/token',
      auth: 'client_secret_basic',
      response: { user_id: 912345678, access_token: 'figu_at', token_type: 'bearer', expires_in: 7776000, refresh_token: 'rt' },
    },
    api: {
      'https://api.figma.com/v1/me': {
        json: { id: '912345678', email: 'dylan@figma.com', handle: 'Dylan', img_url: 'https://s3-alpha.figma.com/dylan.png' },
      },
    },
    user: { name: 'Dylan', email: 'dylan@figma.com', image: 'https://s3-alpha.figma.com/dylan.png' },
    providerAccountId: '912345678',
  },
  {
    file: 'gitlab',
    authorization: { endpoint: 'https://gitlab.com/oauth/authorize', params: { scope: 'read_user' } },
    token: {
      url: 'https://gitlab.com/oauth/token',
      auth: 'client_secret_basic',
      response: bearer({ expires_in: 7200, refresh_token: 'rt', scope: 'read_user', created_at: 1700000000 }),
    },
    api: {
      'https://gitlab.com/api/v4/user': {
        json: {
          id: 1,
          username: 'john_smith',
          name: 'John Smith',
          state: 'active',
          avatar_url: 'https://gitlab.com/uploads/user/avatar/1/cd8.jpeg',
          web_url: 'https://gitlab.com/john_smith',
          email: 'john@example.com',
          two_factor_enabled: true,
          bot: false,
        },
      },
    },
    user: { name: 'John Smith', email: 'john@example.com', image: 'https://gitlab.com/uploads/user/avatar/1/cd8.jpeg' },
    providerAccountId: '1',
  },
  {
    file: 'hubspot',
    authorization: { endpoint: 'https://app.hubspot.com/oauth/authorize', params: { scope: 'oauth' } },
    token: {
      url: 'https://api.hubapi.com/oauth/v1/token',
      auth: 'client_secret_post',
      response: { token_type: 'bearer', refresh_token: 'rt', access_token: 'CJSP5qf1KhICAQEYs-gDIIGOBii1hQIyGQAf3xBKmlwHjX7OIpuIFEavB2-qYAGQsF4', expires_in: 1800 },
    },
    api: {
      'https://api.hubapi.com/oauth/v1/access-tokens/CJSP5qf1KhICAQEYs-gDIIGOBii1hQIyGQAf3xBKmlwHjX7OIpuIFEavB2-qYAGQsF4': {
        bearer: false,
        headers: { 'content-type': 'application/json' },
        json: {
          token: 'CJSP5qf1KhICAQEYs-gDIIGOBii1hQIyGQAf3xBKmlwHjX7OIpuIFEavB2-qYAGQsF4',
          user: 'Test@HubSpot.com',
          hub_domain: 'demo.hubapi.com',
          scopes: ['oauth'],
          hub_id: 62515,
          app_id: 456,
          expires_in: 21588,
          user_id: 123,
          token_type: 'access',
        },
      },
    },
    user: { name: 'Test@HubSpot.com', email: 'test@hubspot.com', image: null },
    providerAccountId: 123,
  },
  {
    file: 'instagram',
    authorization: { endpoint: 'https://api.instagram.com/oauth/authorize', params: { scope: 'user_profile' } },
    token: {
      url: 'https://api.instagram.com/oauth/access_token',
      auth: 'client_secret_post',
      // Instagram's documented answer has no token_type.
      response: { access_token: 'IGQVJ-at', user_id: 17841405793187218 },
    },
    api: {
      'https://graph.instagram.com/me?fields=id,username,account_type,name': {
        json: { id: '17841405793187218', username: 'jayposiris', account_type: 'PERSONAL' },
      },
    },
    user: { name: 'jayposiris', email: null, image: null },
    providerAccountId: '17841405793187218',
  },
  {
    file: 'kakao',
    authorization: { endpoint: 'https://kauth.kakao.com/oauth/authorize', params: { scope: '' } },
    token: {
      url: 'https://kauth.kakao.com/oauth/token',
      auth: 'client_secret_post',
      response: {
        token_type: 'bearer',
        access_token: 'kakao-at',
        expires_in: 43199,
        refresh_token: 'rt',
        refresh_token_expires_in: 5184000,
        scope: 'account_email profile',
      },
    },
    api: {
      'https://kapi.kakao.com/v2/user/me': {
        json: {
          id: 123456789,
          connected_at: '2022-04-11T01:45:28Z',
          kakao_account: {
            profile_nickname_needs_agreement: false,
            profile: {
              nickname: '홍길동',
              thumbnail_image_url: 'http://yyy.kakao.com/.../img_110x110.jpg',
              profile_image_url: 'http://yyy.kakao.com/dn/.../img_640x640.jpg',
              is_default_image: false,
            },
            email: 'sample@sample.com',
            is_email_valid: true,
            is_email_verified: true,
          },
        },
      },
    },
    user: { name: '홍길동', email: 'sample@sample.com', image: 'http://yyy.kakao.com/dn/.../img_640x640.jpg' },
    providerAccountId: '123456789',
  },
  {
    file: 'keycloak',
    options: { issuer: 'https://kc.example.com/realms/acme' },
    discovery: {
      authorization_endpoint: 'https://kc.example.com/realms/acme/protocol/openid-connect/auth',
      token_endpoint: 'https://kc.example.com/realms/acme/protocol/openid-connect/token',
      userinfo_endpoint: 'https://kc.example.com/realms/acme/protocol/openid-connect/userinfo',
      jwks_uri: 'https://kc.example.com/realms/acme/protocol/openid-connect/certs',
    },
    authorization: {
      endpoint: 'https://kc.example.com/realms/acme/protocol/openid-connect/auth',
      params: { scope: 'openid profile email' },
    },
    token: {
      url: 'https://kc.example.com/realms/acme/protocol/openid-connect/token',
      auth: 'client_secret_basic',
      response: bearer({ refresh_expires_in: 1800, refresh_token: 'rt', 'not-before-policy': 0, session_state: 'ss-1', scope: 'openid email profile' }),
    },
    idToken: {
      claims: {
        sub: 'f1e2d3c4-b5a6-4978-8a9b-0c1d2e3f4a5b',
        typ: 'ID',
        azp: 'client-id',
        session_state: 'ss-1',
        email_verified: true,
        name: 'Barbara Liskov',
        preferred_username: 'barbara',
        given_name: 'Barbara',
        family_name: 'Liskov',
        email: 'barbara@example.com',
      },
    },
    user: { name: 'Barbara Liskov', email: 'barbara@example.com' },
    providerAccountId: 'f1e2d3c4-b5a6-4978-8a9b-0c1d2e3f4a5b',
  },
  {
    file: 'line',
    discovery: {
      authorization_endpoint: 'https://access.line.me/oauth2/v2.1/authorize',
      token_endpoint: 'https://api.line.me/oauth2/v2.1/token',
      userinfo_endpoint: 'https://api.line.me/oauth2/v2.1/userinfo',
      jwks_uri: 'https://api.line.me/oauth2/v2.1/certs',
      id_token_signing_alg_values_supported: ['ES256'],
    },
    authorization: { endpoint: 'https://access.line.me/oauth2/v2.1/authorize', params: { scope: 'openid profile email' } },
    token: {
      url: 'https://api.line.me/oauth2/v2.1/token',
      auth: 'client_secret_basic',
      response: bearer({ expires_in: 2592000, refresh_token: 'rt', scope: 'openid profile email' }),
    },
    idToken: {
      alg: 'HS256',
      claims: { sub: 'U1234567890abcdef1234567890abcdef', amr: ['pwd'], name: 'Taro Line', picture: 'https://profile.line-scdn.net/abcdefghijklmn', email: 'taro.line@example.com' },
    },
    user: { name: 'Taro Line', email: 'taro.line@example.com', image: 'https://profile.line-scdn.net/abcdefghijklmn' },
    providerAccountId: 'U1234567890abcdef1234567890abcdef',
  },
  {
    file: 'linkedin',
    discovery: {
      authorization_endpoint: 'https://www.linkedin.com/oauth/v2/authorization',
      token_endpoint: 'https://www.linkedin.com/oauth/v2/accessToken',
      userinfo_endpoint: 'https://api.linkedin.com/v2/userinfo',
      jwks_uri: 'https://www.linkedin.com/oauth/openid/jwks',
    },
    authorization: { endpoint: 'https://www.linkedin.com/oauth/v2/authorization', params: { scope: 'openid profile email' } },
    token: {
      url: 'https://www.linkedin.com/oauth/v2/accessToken',
      auth: 'client_secret_post',
      response: bearer({ expires_in: 5183999, scope: 'email,openid,profile' }),
    },
    idToken: {
      claims: {
        sub: '782bbtaQ',
        name: 'John Doe',
        given_name: 'John',
        family_name: 'Doe',
        picture: 'https://media.licdn-ei.com/dms/image/C5F03AQHqK8v7tB1HCQ/profile-displayphoto-shrink_100_100/0/',
        locale: 'en-US',
        email: 'doe@email.com',
        email_verified: true,
      },
    },
    user: {
      name: 'John Doe',
      email: 'doe@email.com',
      image: 'https://media.licdn-ei.com/dms/image/C5F03AQHqK8v7tB1HCQ/profile-displayphoto-shrink_100_100/0/',
    },
    providerAccountId: '782bbtaQ',
  },
  {
    file: 'mastodon',
    options: { issuer: 'https://mastodon.social' },
    authorization: { endpoint: 'https://mastodon.social/oauth/authorize', params: { scope: 'read' } },
    token: {
      url: 'https://mastodon.social/oauth/token',
      auth: 'client_secret_basic',
      response: { access_token: 'ZA-Yj3aBD8U8Cm7lKUp-lm9O9BmDgdhHzDeqsY8tlL0', token_type: 'Bearer', scope: 'read', created_at: 1573979017 },
    },
    api: {
      'https://mastodon.social/api/v1/accounts/verify_credentials': {
        json: {
          id: '14715',
          username: 'trwnh',
          acct: 'trwnh',
          display_name: 'infinite love ⴳ',
          avatar: 'https://files.mastodon.social/accounts/avatars/000/014/715/original/34aa222f4ae2e0a9.png',
          avatar_static: 'https://files.mastodon.social/accounts/avatars/000/014/715/original/34aa222f4ae2e0a9.png',
        },
      },
    },
    user: { name: 'trwnh', email: null, image: 'https://files.mastodon.social/accounts/avatars/000/014/715/original/34aa222f4ae2e0a9.png' },
    providerAccountId: '14715',
  },
  {
    file: 'microsoft-entra-id',
    discovery: {
      // The multi-tenant document names an issuer template, not the configured issuer.
      issuer: 'https://login.microsoftonline.com/{tenantid}/v2.0',
      authorization_endpoint: 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize',
      token_endpoint: 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
      userinfo_endpoint: 'https://graph.microsoft.com/oidc/userinfo',
      jwks_uri: 'https://login.microsoftonline.com/common/discovery/v2.0/keys',
    },
    authorization: {
      endpoint: 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize',
      params: { scope: 'openid profile email User.Read' },
    },
    token: {
      url: 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
      auth: 'client_secret_basic',
      response: bearer({ scope: 'email openid profile User.Read', ext_expires_in: 3600, refresh_token: 'rt' }),
    },
    idToken: {
      claims: {
        iss: 'https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0',
        tid: '9188040d-6c67-4c5b-b112-36a304b66dad',
        sub: 'AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ',
        oid: '00000000-0000-0000-66f3-3332eca7ea81',
        name: 'Abe Lincoln',
        preferred_username: 'AbeLi@microsoft.com',
        email: 'AbeLi@microsoft.com',
        ver: '2.0',
      },
    },
    api: {
      'https://graph.microsoft.com/v1.0/me/photos/48x48/$value': { bytes: PHOTO, contentType: 'image/jpeg' },
    },
    user: {
      name: 'Abe Lincoln',
      email: 'abeli@microsoft.com',
      image: `data:image/jpeg;base64, ${Buffer.from(PHOTO).toString('base64')}`,
    },
    providerAccountId: 'AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ',
  },
  {
    file: 'naver',
    authorization: { endpoint: 'https://nid.naver.com/oauth2.0/authorize', params: { scope: 'openid profile email' } },
    token: {
      url: 'https://nid.naver.com/oauth2.0/token',
      auth: 'client_secret_basic',
      // Naver documents expires_in as a string.
      response: { access_token: 'AAAAQosjWDJieBiQZc3to9YQp6HDLvrmyKC', refresh_token: 'rt', token_type: 'bearer', expires_in: '3600' },
    },
    api: {
      'https://openapi.naver.com/v1/nid/me': {
        json: {
          resultcode: '00',
          message: 'success',
          response: {
            email: 'openapi@naver.com',
            nickname: 'OpenAPI',
            profile_image: 'https://ssl.pstatic.net/static/pwe/address/nodata_33x33.gif',
            age: '40-49',
            gender: 'F',
            id: '32742776',
            name: '오픈 API',
            birthday: '10-01',
          },
        },
      },
    },
    user: { name: 'OpenAPI', email: 'openapi@naver.com', image: 'https://ssl.pstatic.net/static/pwe/address/nodata_33x33.gif' },
    providerAccountId: '32742776',
  },
  {
    file: 'notion',
    authorization: { endpoint: 'https://api.notion.com/v1/oauth/authorize', params: { owner: 'user', scope: 'openid profile email' } },
    token: {
      url: 'https://api.notion.com/v1/oauth/token',
      auth: 'client_secret_basic',
      response: {
        access_token: 'secret_notion',
        token_type: 'bearer',
        bot_id: 'b3414d659-1224-5ty7-6ffr-cc9d8773d0a5',
        workspace_name: 'Acme',
        workspace_icon: 'https://website.domain/images/image.png',
        workspace_id: 'j565j4d7x3-2882-61bs-564a-jj9d9ui-c36hxfr7x',
        owner: { type: 'user', user: { object: 'user', id: 'ee5f0f84-409a-440f-983a-a5315961c6e4' } },
        duplicated_template_id: null,
        request_id: 'f3b1c2d4',
      },
    },
    api: {
      'https://api.notion.com/v1/users/me': {
        headers: { 'notion-version': '2022-06-28' },
        json: {
          object: 'user',
          id: '16d84278-ab0e-484c-9bdd-b35da3bd8905',
          name: 'pied piper',
          avatar_url: null,
          type: 'bot',
          bot: {
            owner: {
              type: 'user',
              user: {
                object: 'user',
                id: 'ee5f0f84-409a-440f-983a-a5315961c6e4',
                name: 'Avocado Lovelace',
                avatar_url: 'https://secure.notion-static.com/e6a352a8-8381-44d0-a1dc-9ed80e62b53d.jpg',
                type: 'person',
                person: { email: 'avo@example.org' },
              },
            },
            workspace_name: 'Acme',
          },
        },
      },
    },
    user: {
      name: 'Avocado Lovelace',
      email: 'avo@example.org',
      image: 'https://secure.notion-static.com/e6a352a8-8381-44d0-a1dc-9ed80e62b53d.jpg',
    },
    providerAccountId: 'ee5f0f84-409a-440f-983a-a5315961c6e4',
  },
  {
    file: 'okta',
    options: { issuer: 'https://dev-123456.okta.com/oauth2/default' },
    discovery: {
      authorization_endpoint: 'https://dev-123456.okta.com/oauth2/default/v1/authorize',
      token_endpoint: 'https://dev-123456.okta.com/oauth2/default/v1/token',
      userinfo_endpoint: 'https://dev-123456.okta.com/oauth2/default/v1/userinfo',
      jwks_uri: 'https://dev-123456.okta.com/oauth2/default/v1/keys',
    },
    authorization: { endpoint: 'https://dev-123456.okta.com/oauth2/default/v1/authorize', params: { scope: 'openid profile email' } },
    token: {
      url: 'https://dev-123456.okta.com/oauth2/default/v1/token',
      auth: 'client_secret_basic',
      response: bearer({ scope: 'openid profile email' }),
    },
    idToken: {
      claims: {
        sub: '00uid4BxXw6I6TV4m0g3',
        ver: 1,
        name: 'John Doe',
        preferred_username: 'john.doe@example.com',
        email: 'john.doe@example.com',
        amr: ['pwd'],
        idp: '00oid4BxXw6I6TV4m0g3',
      },
    },
    user: { name: 'John Doe', email: 'john.doe@example.com' },
    providerAccountId: '00uid4BxXw6I6TV4m0g3',
  },
  {
    file: 'patreon',
    authorization: { endpoint: 'https://www.patreon.com/oauth2/authorize', params: { scope: 'identity identity[email]' } },
    token: {
      url: 'https://www.patreon.com/api/oauth2/token',
      auth: 'client_secret_basic',
      response: { access_token: 'patreon-at', refresh_token: 'rt', expires_in: 2678400, scope: 'identity identity[email]', token_type: 'Bearer' },
    },
    api: {
      'https://www.patreon.com/api/oauth2/api/current_user': {
        json: {
          data: {
            type: 'user',
            id: '1234567',
            attributes: {
              full_name: 'Corgi The Dev',
              email: 'corgi@example.com',
              image_url: 'https://c8.patreon.com/2/200/1234567',
              vanity: 'corgi',
            },
          },
        },
      },
    },
    user: { name: 'Corgi The Dev', email: 'corgi@example.com', image: 'https://c8.patreon.com/2/200/1234567' },
    providerAccountId: '1234567',
  },
  {
    file: 'pinterest',
    authorization: { endpoint: 'https://www.pinterest.com/oauth', params: { scope: 'user_accounts:read' } },
    token: {
      url: 'https://api.pinterest.com/v5/oauth/token',
      auth: 'client_secret_basic',
      response: {
        access_token: 'pina_at',
        refresh_token: 'pinr_rt',
        response_type: 'authorization_code',
        token_type: 'bearer',
        expires_in: 2592000,
        refresh_token_expires_in: 31536000,
        scope: 'user_accounts:read',
      },
    },
    api: {
      'https://api.pinterest.com/v5/user_account': {
        json: { account_type: 'PINNER', profile_image: 'https://i.pinimg.com/280x280_RS/ab/cd.jpg', website_url: 'https://example.com', username: 'pinner' },
      },
    },
    user: { name: 'pinner', email: null, image: 'https://i.pinimg.com/280x280_RS/ab/cd.jpg' },
    providerAccountId: 'pinner',
  },
  {
    file: 'reddit',
    authorization: { endpoint: 'https://www.reddit.com/api/v1/authorize', params: { scope: 'identity' } },
    token: {
      url: 'https://www.reddit.com/api/v1/access_token',
      auth: 'client_secret_basic',
      response: { access_token: 'reddit-at', token_type: 'bearer', expires_in: 86400, scope: 'identity' },
    },
    api: {
      'https://oauth.reddit.com/api/v1/me': {
        json: { id: '1w72', name: 'spez', icon_img: 'https://styles.redditmedia.com/t5_3k30p/styles/profileIcon.png', total_karma: 1 },
      },
    },
    user: { name: 'spez' },
    providerAccountId: '1w72',
  },
  {
    file: 'salesforce',
    discovery: {
      authorization_endpoint: 'https://login.salesforce.com/services/oauth2/authorize',
      token_endpoint: 'https://login.salesforce.com/services/oauth2/token',
      userinfo_endpoint: 'https://login.salesforce.com/services/oauth2/userinfo',
      jwks_uri: 'https://login.salesforce.com/id/keys',
    },
    authorization: { endpoint: 'https://login.salesforce.com/services/oauth2/authorize', params: { scope: 'openid profile email' } },
    token: {
      url: 'https://login.salesforce.com/services/oauth2/token',
      auth: 'client_secret_basic',
      response: {
        access_token: '00Dxx0000001gPL!AR8AQJXg5oj8jXSgxJfA0lBog',
        signature: 'ZmxzZGZrc2RmIHNkZmtz',
        scope: 'openid profile email',
        instance_url: 'https://yourInstance.salesforce.com',
        id: 'https://login.salesforce.com/id/00Dxx0000001gPLEAY/005xx000001SwiUAAS',
        token_type: 'Bearer',
        issued_at: '1278448832702',
      },
    },
    idToken: { claims: { sub: 'https://login.salesforce.com/id/00Dxx0000001gPLEAY/005xx000001SwiUAAS' } },
    api: {
      'https://login.salesforce.com/services/oauth2/userinfo': {
        json: {
          sub: 'https://login.salesforce.com/id/00Dxx0000001gPLEAY/005xx000001SwiUAAS',
          user_id: '005xx000001SwiUAAS',
          organization_id: '00Dxx0000001gPLEAY',
          preferred_username: 'admin@acme.example',
          nickname: 'admin',
          name: 'Marc Example',
          email: 'Marc@Acme.example',
          email_verified: true,
          picture: 'https://acme.file.force.com/profilephoto/005/F',
          user_type: 'STANDARD',
        },
      },
    },
    user: { name: 'Marc Example', email: 'marc@acme.example', image: 'https://acme.file.force.com/profilephoto/005/F' },
    providerAccountId: 'https://login.salesforce.com/id/00Dxx0000001gPLEAY/005xx000001SwiUAAS',
  },
  {
    file: 'slack',
    discovery: {
      authorization_endpoint: 'https://slack.com/openid/connect/authorize',
      token_endpoint: 'https://slack.com/api/openid.connect.token',
      userinfo_endpoint: 'https://slack.com/api/openid.connect.userInfo',
      jwks_uri: 'https://slack.com/openid/connect/keys',
    },
    authorization: { endpoint: 'https://slack.com/openid/connect/authorize', params: { scope: 'openid profile email' } },
    token: {
      url: 'https://slack.com/api/openid.connect.token',
      auth: 'client_secret_basic',
      response: { ok: true, access_token: 'xoxp-1234', token_type: 'Bearer' },
    },
    idToken: {
      claims: {
        sub: 'U0R7JM',
        'https://slack.com/user_id': 'U0R7JM',
        'https://slack.com/team_id': 'T0R7GR',
        email: 'krane@slack-corp.com',
        email_verified: true,
        name: 'krane',
        picture: 'https://secure.gravatar.com/avatar/krane.jpg',
        given_name: '',
        family_name: '',
        locale: 'en-US',
        'https://slack.com/team_name': 'kraneflannel',
      },
    },
    user: { name: 'krane', email: 'krane@slack-corp.com', image: 'https://secure.gravatar.com/avatar/krane.jpg' },
    providerAccountId: 'U0R7JM',
  },
  {
    file: 'spotify',
    authorization: { endpoint: 'https://accounts.spotify.com/authorize', params: { scope: 'user-read-email' } },
    token: {
      url: 'https://accounts.spotify.com/api/token',
      auth: 'client_secret_basic',
      response: bearer({ scope: 'user-read-email', refresh_token: 'rt' }),
    },
    api: {
      'https://api.spotify.com/v1/me': {
        json: {
          country: 'SE',
          display_name: 'Daniel',
          email: 'daniel@example.com',
          id: 'wizzler',
          images: [{ url: 'https://i.scdn.co/image/ab67757000003b82', height: 300, width: 300 }],
          product: 'premium',
          type: 'user',
          uri: 'spotify:user:wizzler',
        },
      },
    },
    user: { name: 'Daniel', email: 'daniel@example.com', image: 'https://i.scdn.co/image/ab67757000003b82' },
    providerAccountId: 'wizzler',
  },
  {
    file: 'strava',
    authorization: {
      endpoint: 'https://www.strava.com/api/v3/oauth/authorize',
      params: { scope: 'read', approval_prompt: 'auto' },
    },
    token: {
      url: 'https://www.strava.com/api/v3/oauth/token',
      auth: 'client_secret_post',
      response: {
        token_type: 'Bearer',
        expires_at: 1568775134,
        expires_in: 21600,
        refresh_token: 'e5n567567',
        access_token: 'a4b945687g',
        athlete: { id: 134815, username: 'marianne_t' },
      },
    },
    api: {
      'https://www.strava.com/api/v3/athlete': {
        json: {
          id: 134815,
          username: 'marianne_t',
          firstname: 'Marianne',
          lastname: 'Teutenberg',
          city: 'San Francisco',
          profile: 'https://xxxxxx.cloudfront.net/pictures/athletes/123456789/123456789/2/large.jpg',
        },
      },
    },
    user: { name: 'Marianne Teutenberg', email: null, image: 'https://xxxxxx.cloudfront.net/pictures/athletes/123456789/123456789/2/large.jpg' },
    providerAccountId: 134815,
  },
  {
    file: 'tiktok',
    authorization: {
      endpoint: 'https://www.tiktok.com/v2/auth/authorize',
      params: { client_key: 'client-id', scope: 'user.info.basic' },
    },
    token: {
      url: 'https://open.tiktokapis.com/v2/oauth/token/',
      auth: 'client_secret_post',
      extraBody: { client_key: 'client-id' },
      response: {
        access_token: 'act.example12345Example12345Example',
        expires_in: 86400,
        open_id: 'afd97af1-b87b-48b9-ac98-410aghda5344',
        refresh_expires_in: 31536000,
        refresh_token: 'rft.example12345Example12345Example',
        scope: 'user.info.basic',
        token_type: 'Bearer',
      },
    },
    api: {
      'https://open.tiktokapis.com/v2/user/info/?fields=open_id,avatar_url,display_name': {
        json: {
          data: {
            user: {
              avatar_url: 'https://p19-sign.tiktokcdn-us.com/tos-useast5-avt-0068-tx/b17f0e4b3a4f4a50993cf72cda8b88b8~c5_168x168.jpeg',
              open_id: 'afd97af1-b87b-48b9-ac98-410aghda5344',
              display_name: 'TikTok User',
            },
          },
          error: { code: 'ok', message: '', log_id: '20220829194722CBE87ED59D524E727021' },
        },
      },
    },
    user: {
      name: 'TikTok User',
      email: null,
      image: 'https://p19-sign.tiktokcdn-us.com/tos-useast5-avt-0068-tx/b17f0e4b3a4f4a50993cf72cda8b88b8~c5_168x168.jpeg',
    },
    providerAccountId: 'afd97af1-b87b-48b9-ac98-410aghda5344',
  },
  {
    file: 'twitch',
    discovery: {
      authorization_endpoint: 'https://id.twitch.tv/oauth2/authorize',
      token_endpoint: 'https://id.twitch.tv/oauth2/token',
      userinfo_endpoint: 'https://id.twitch.tv/oauth2/userinfo',
      jwks_uri: 'https://id.twitch.tv/oauth2/keys',
      claims_parameter_supported: true,
    },
    authorization: {
      endpoint: 'https://id.twitch.tv/oauth2/authorize',
      params: {
        scope: 'openid user:read:email',
        claims: JSON.stringify({ id_token: { email: null, picture: null, preferred_username: null } }),
      },
    },
    token: {
      url: 'https://id.twitch.tv/oauth2/token',
      auth: 'client_secret_post',
      // Twitch lists the scopes as an array.
      response: bearer({ expires_in: 14124, refresh_token: 'rt', scope: ['openid', 'user:read:email'], token_type: 'bearer' }),
    },
    idToken: {
      claims: {
        sub: '713936733',
        azp: 'client-id',
        email: 'twitchdev@example.com',
        picture: 'https://static-cdn.jtvnw.net/jtv_user_pictures/twitchdev.png',
        preferred_username: 'TwitchDev',
      },
    },
    user: { name: 'TwitchDev', email: 'twitchdev@example.com', image: 'https://static-cdn.jtvnw.net/jtv_user_pictures/twitchdev.png' },
    providerAccountId: '713936733',
  },
  {
    file: 'wordpress',
    authorization: { endpoint: 'https://public-api.wordpress.com/oauth2/authorize', params: { scope: 'auth' } },
    token: {
      url: 'https://public-api.wordpress.com/oauth2/token',
      auth: 'client_secret_basic',
      response: { access_token: 'wp-at', blog_id: '0', blog_url: null, token_type: 'bearer', scope: 'auth' },
    },
    api: {
      'https://public-api.wordpress.com/rest/v1/me': {
        json: {
          ID: 18342963,
          display_name: 'Matt',
          username: 'matt',
          email: 'matt@example.com',
          avatar_URL: 'https://0.gravatar.com/avatar/matt.png',
          verified: true,
        },
      },
    },
    user: { name: 'Matt', email: 'matt@example.com', image: 'https://0.gravatar.com/avatar/matt.png' },
    providerAccountId: 18342963,
  },
  {
    file: 'yandex',
    authorization: { endpoint: 'https://oauth.yandex.ru/authorize', params: { scope: 'login:info login:email login:avatar' } },
    token: {
      url: 'https://oauth.yandex.ru/token',
      auth: 'client_secret_basic',
      response: { token_type: 'bearer', access_token: 'AQAAAACy1C6ZAAAAfa6vDLuItEy8pg-iIpnDxIs', expires_in: 124234123534, refresh_token: 'rt' },
    },
    api: {
      'https://login.yandex.ru/info?format=json': {
        json: {
          id: '1000034426',
          login: 'ivan',
          client_id: '4760187d81bc4b7799476b42b5103713',
          display_name: 'Ivan',
          real_name: 'Ivan Ivanov',
          first_name: 'Ivan',
          last_name: 'Ivanov',
          sex: 'male',
          default_email: 'test@yandex.ru',
          emails: ['test@yandex.ru', 'other-test@yandex.ru'],
          default_avatar_id: '131652443',
          is_avatar_empty: false,
          psuid: '1.AAceCw.tbHgw5DtJ9_zeqPrk-Ba2w.qPWSRC5v2t2IaksPJgnge',
        },
      },
    },
    user: { name: 'Ivan', email: 'test@yandex.ru', image: 'https://avatars.yandex.net/get-yapic/131652443/islands-200' },
    providerAccountId: '1000034426',
  },
  {
    file: 'zitadel',
    options: { issuer: 'https://acme-abc123.zitadel.cloud' },
    discovery: {
      authorization_endpoint: 'https://acme-abc123.zitadel.cloud/oauth/v2/authorize',
      token_endpoint: 'https://acme-abc123.zitadel.cloud/oauth/v2/token',
      userinfo_endpoint: 'https://acme-abc123.zitadel.cloud/oidc/v1/userinfo',
      jwks_uri: 'https://acme-abc123.zitadel.cloud/oauth/v2/keys',
    },
    authorization: { endpoint: 'https://acme-abc123.zitadel.cloud/oauth/v2/authorize', params: { scope: 'openid profile email' } },
    token: { url: 'https://acme-abc123.zitadel.cloud/oauth/v2/token', auth: 'client_secret_basic', response: bearer() },
    idToken: {
      claims: {
        sub: '217645309328621569',
        name: 'Road Runner',
        given_name: 'Road',
        family_name: 'Runner',
        preferred_username: 'road.runner@acme.zitadel.cloud',
        email: 'road.runner@acme.example',
        email_verified: true,
        locale: 'en',
      },
    },
    user: { name: 'Road Runner', email: 'road.runner@acme.example' },
    providerAccountId: '217645309328621569',
  },
  {
    file: 'zoom',
    authorization: { endpoint: 'https://zoom.us/oauth/authorize', params: { scope: '' } },
    token: {
      url: 'https://zoom.us/oauth/token',
      auth: 'client_secret_basic',
      response: { access_token: 'eyJhbGciOiJIUzUxMiJ9.zoom', token_type: 'bearer', refresh_token: 'rt', expires_in: 3599, scope: 'user:read' },
    },
    api: {
      'https://api.zoom.us/v2/users/me': {
        json: {
          id: 'KDcuGIm1QgePTO8WbOqwIQ',
          first_name: 'Jill',
          last_name: 'Chill',
          email: 'jchill@example.com',
          type: 1,
          pic_url: 'https://example.com/photo.jpg',
        },
      },
    },
    user: { name: 'Jill Chill', email: 'jchill@example.com', image: 'https://example.com/photo.jpg' },
    providerAccountId: 'KDcuGIm1QgePTO8WbOqwIQ',
  },
]
